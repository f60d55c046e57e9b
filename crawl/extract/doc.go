// Package extract reads an HTML page as it streams in and reports its
// links and the few facts weaver keeps about it: title, description, base
// URL, and whether a robots meta tag says nofollow.
//
// It drives golang.org/x/net/html's Tokenizer rather than building a DOM:
// weaver only needs <a href>, <area href>, <base href>, <title> and <meta>,
// and a tokenizer has no tree to grow on hostile input (a 10,000-deep
// unclosed nesting costs nothing). The tokenizer's buffer is bounded by
// Extractor.MaxBuf, so one giant token cannot take memory without limit;
// the caller bounds the body itself.
//
// A page already in memory (PageBytes, LinksBytes) is read by a byte
// scanner that gives the tokenizer's tokens, boundaries, text and
// attributes, several times faster: the tokenizer reads every byte
// through a bounded buffer and copies, lowers and deduplicates every
// attribute of every tag, where the scanner jumps from '<' to '<' and
// reads the attributes of the few tags extract wants. The tokenizer stays
// the reference: FuzzScanner compares the two on any input, token by token
// and page by page, and what the scanner does not do itself is done by
// x/net/html (a page of MaxBuf bytes or more, whose tokens could exceed
// the bound; a tag holding a character reference other than the numeric
// ones and the few named ones attributes commonly hold; text references).
// Both read UTF-8: Extractor.Decoded first decodes a page in another
// encoding, as HTML's encoding sniffing decides.
//
// Links are reported in document order, resolved as a browser resolves
// them: against the first <base href> that comes before them (itself
// resolved against the page URL), else the page URL; with leading and
// trailing C0 controls and spaces trimmed and tabs and newlines removed;
// without their fragment. Only absolute http and https URLs of at most
// MaxURLLen bytes are reported. Like a browser (and like the tokenizer),
// extract treats the content of <script>, <style>, <iframe>, <textarea>
// and similar elements as text, so links written there are not reported;
// a <noscript> holds markup, as it does for a browser with scripting off
// (weaver runs no script), and its links are reported; links inside <template> are not part of
// the document either and are skipped.
//
// Text kept from the page (title, description) is valid UTF-8 with
// whitespace runs collapsed to one space, control characters dropped, and
// a length cap in runes, so it can go to the store and to XML exports as is.
//
// An Extractor keeps its scratch buffers between pages; use one per worker.
package extract
