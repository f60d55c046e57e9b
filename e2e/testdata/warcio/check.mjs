// check.mjs FILE... reads WARC files with warcio.js (webrecorder's reader,
// written independently of weaver and gowarc) and checks every record:
// WARC-Block-Digest against the sha1 of the block, WARC-Payload-Digest
// against the sha1 of the HTTP body of response and request records,
// Content-Length against the block read, that fields are spelled as WARC
// spells them (headers are looked up case-sensitively), and that the HTTP message of
// request, response and revisit records starts with an HTTP/1.x request
// or status line (the form readers parse, whatever protocol was spoken).
// It prints one JSON line per file: {"file", "records", "types": {...},
// "digests": N, "errors": [...], "protocols": {"h2 tls/1.3": N, ...} (the
// WARC-Protocol fields of each response record, as warcio.js reads them),
// "ciphers": N (response records with WARC-Cipher-Suite), "https": N
// (response records of an https WARC-Target-URI)} and exits 1 when any
// check failed.
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser } from "warcio";

function base32(buf) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8) out += "=";
  return out;
}

function sha1(buf) {
  return "sha1:" + base32(createHash("sha1").update(buf).digest());
}

function indexOfCRLFCRLF(buf) {
  for (let i = 0; i + 3 < buf.length; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

let failed = false;
for (const file of process.argv.slice(2)) {
  const res = { file, records: 0, types: {}, digests: 0, errors: [], protocols: {}, ciphers: 0, https: 0 };
  const parser = new WARCParser(createReadStream(file), { parseHttp: false, keepHeadersCase: true });
  try {
    for await (const record of parser) {
      const h = { get: (name) => record.warcHeader(name) };
      const type = h.get("WARC-Type");
      res.records++;
      res.types[type] = (res.types[type] || 0) + 1;
      const block = Buffer.from(await record.readFully(false));
      const id = h.get("WARC-Record-ID");
      const len = Number(h.get("Content-Length"));
      if (len !== block.length) res.errors.push(`${id}: Content-Length ${len}, block ${block.length}`);
      for (const name of ["WARC-Record-ID", "WARC-Date", "WARC-Type"]) {
        if (!h.get(name)) res.errors.push(`${id || "record " + res.records}: no ${name}`);
      }
      const bd = h.get("WARC-Block-Digest");
      if (!bd) res.errors.push(`${id}: no WARC-Block-Digest`);
      else if (bd !== sha1(block)) res.errors.push(`${id}: WARC-Block-Digest ${bd}, computed ${sha1(block)}`);
      else res.digests++;
      const pd = h.get("WARC-Payload-Digest");
      if (type === "response" || type === "request") {
        const end = indexOfCRLFCRLF(block);
        const payload = end < 0 ? Buffer.alloc(0) : block.subarray(end + 4);
        if (type === "response" && !pd) res.errors.push(`${id}: response without WARC-Payload-Digest`);
        if (pd && pd !== sha1(payload)) res.errors.push(`${id}: WARC-Payload-Digest ${pd}, computed ${sha1(payload)}`);
        else if (pd) res.digests++;
        for (const name of ["WARC-Target-URI", "WARC-Concurrent-To"]) {
          if (!h.get(name)) res.errors.push(`${id}: no ${name}`);
        }
      }
      if (type === "response" || type === "request" || type === "revisit") {
        const nl = block.indexOf("\r\n");
        const line = block.subarray(0, nl < 0 ? block.length : nl).toString("latin1");
        const ok = type === "request" ? /^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(line) : /^HTTP\/1\.[01] \d{3}( |$)/.test(line);
        if (!ok) res.errors.push(`${id}: ${type} starts ${JSON.stringify(line)}, not an HTTP/1.x ${type === "request" ? "request" : "status"} line`);
      }
      if (type === "response") {
        const protocols = record.warcHeaders.headers.getMultiple("WARC-Protocol") || [];
        const key = protocols.join(" ");
        res.protocols[key] = (res.protocols[key] || 0) + 1;
        if (h.get("WARC-Cipher-Suite")) res.ciphers++;
        if ((h.get("WARC-Target-URI") || "").startsWith("https://")) res.https++;
      }
      if (type === "revisit") {
        for (const name of ["WARC-Profile", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Payload-Digest"]) {
          if (!h.get(name)) res.errors.push(`${id}: revisit without ${name}`);
        }
      }
    }
  } catch (e) {
    res.errors.push(`read: ${e}`);
  }
  if (res.errors.length) failed = true;
  console.log(JSON.stringify(res));
}
process.exit(failed ? 1 : 0);
