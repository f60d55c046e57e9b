package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// A link travels as its depth (uvarint), its scheme (one byte: 's' for
// https, 'h' for http) and its host: "www.example.com" at depth 3 over
// https is 17 bytes. A redirect's link (crawl.Link's First or
// SeedRedirects set) has its scheme byte upper case ('S', 'H') and, after
// the host, a NUL (which no host holds), its SeedRedirects (uvarint) and
// its First. The outbox stores the same bytes.
func encodeLink(l crawl.Link) []byte {
	b := binary.AppendUvarint(make([]byte, 0, len(l.Host)+len(l.First)+6), uint64(max(l.Depth, 0)))
	c := byte('h')
	if l.Scheme == "https" {
		c = 's'
	}
	ext := l.First != "" || l.SeedRedirects > 0
	if ext {
		c -= 'a' - 'A'
	}
	b = append(append(b, c), l.Host...)
	if ext {
		b = binary.AppendUvarint(append(b, 0), uint64(max(l.SeedRedirects, 0)))
		b = append(b, l.First...)
	}
	return b
}

// errLink is a message this weaver did not write.
var errLink = errors.New("malformed link")

func decodeLink(b []byte) (crawl.Link, error) {
	var l crawl.Link
	d, n := binary.Uvarint(b)
	if n <= 0 || d > 1<<30 || len(b) < n+2 {
		return l, errLink
	}
	ext := false
	switch b[n] {
	case 'S':
		ext = true
		fallthrough
	case 's':
		l.Scheme = "https"
	case 'H':
		ext = true
		fallthrough
	case 'h':
		l.Scheme = "http"
	default:
		return l, errLink
	}
	rest := b[n+1:]
	if ext {
		i := bytes.IndexByte(rest, 0)
		if i <= 0 {
			return crawl.Link{}, errLink
		}
		hop, m := binary.Uvarint(rest[i+1:])
		if m <= 0 || hop > 1<<10 {
			return crawl.Link{}, errLink
		}
		l.SeedRedirects, l.First, rest = int(hop), string(rest[i+1+m:]), rest[:i]
	}
	l.Host, l.Depth = string(rest), int(d)
	return l, nil
}

// Forward implements crawl.Peer: the link goes into the outbox, in the
// page's transaction, under the next outbox sequence.
func (n *Node) Forward(tx *kv.Tx, l crawl.Link) error {
	seq, err := tx.AddCounter(metaOutboxSeq, 1)
	if err != nil {
		return err
	}
	if _, err := tx.AddCounter(metaOutbox, 1); err != nil {
		return err
	}
	return tx.PutRaw(kv.BucketOutbox, kv.U64(seq), encodeLink(l))
}

// msgID is a message's Nats-Msg-Id: the crawl, the sending shard and its
// outbox sequence, so a republished entry has the id it had.
func msgID(crawlName string, k int, seq uint64) string {
	return crawlName + "." + strconv.Itoa(k) + "." + strconv.FormatUint(seq, 10)
}

// parseMsgID returns the inbox key of a message id of crawl: the sending
// shard (4 bytes) and its sequence (8 bytes).
func parseMsgID(crawlName, id string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(id, crawlName+".")
	if !ok {
		return nil, false
	}
	ks, ss, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, false
	}
	k, err1 := strconv.ParseUint(ks, 10, 32)
	seq, err2 := strconv.ParseUint(ss, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	return append(kv.U32(uint32(k)), kv.U64(seq)...), true
}

// publishBatch is the most outbox entries published at once.
const publishBatch = 1024

// publishLoop drains the outbox whenever a commit filled it, the
// connection came back, or a second passed.
func (n *Node) publishLoop(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		case <-tick.C:
		}
		for ctx.Err() == nil {
			k, err := n.publishBatch(ctx)
			if err != nil {
				if ctx.Err() == nil && n.nc.IsConnected() {
					n.logf("WARN", "Cluster: publishing links: %v (retrying)", err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				break
			}
			backoff = 100 * time.Millisecond
			if k < publishBatch {
				break
			}
		}
	}
}

// publishBatch publishes up to publishBatch outbox entries, waits for the
// stream to acknowledge them, and deletes the acknowledged ones in one
// transaction that also counts them as sent. It returns how many it
// read. A crash anywhere in between leaves the entries in the outbox, to
// be published again under the same ids.
func (n *Node) publishBatch(ctx context.Context) (int, error) {
	type entry struct {
		seq  uint64
		link []byte
	}
	var batch []entry
	if err := n.store.View(func(tx *kv.Tx) error {
		c := tx.Cursor(kv.BucketOutbox)
		for k, v := c.First(); k != nil && len(batch) < publishBatch; k, v = c.Next() {
			if len(k) == 8 {
				batch = append(batch, entry{binary.BigEndian.Uint64(k), append([]byte(nil), v...)})
			}
		}
		return nil
	}); err != nil || len(batch) == 0 {
		return 0, err
	}
	if n.opt.Hook != nil {
		n.opt.Hook("read")
	}
	if !n.nc.IsConnected() {
		return len(batch), nats.ErrConnectionClosed
	}
	futures := make([]jetstream.PubAckFuture, 0, len(batch))
	var perr error
	for _, e := range batch {
		l, err := decodeLink(e.link)
		if err != nil {
			perr = fmt.Errorf("outbox entry %d: %w", e.seq, err)
			break
		}
		msg := nats.NewMsg(subject(n.name, shard.Owner(l.Host, n.spec.N)))
		msg.Data = e.link
		f, err := n.js.PublishMsgAsync(msg, jetstream.WithMsgID(msgID(n.name, n.spec.K, e.seq)))
		if err != nil {
			perr = err
			break
		}
		futures = append(futures, f)
	}
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	acked := make([]uint64, 0, len(futures))
wait:
	for i, f := range futures {
		select {
		case <-f.Ok():
			acked = append(acked, batch[i].seq)
		case err := <-f.Err():
			if perr == nil {
				perr = err
			}
		case <-timeout.C:
			if perr == nil {
				perr = errors.New("no acknowledgement from the stream in 10 s")
			}
			break wait
		case <-ctx.Done():
			if perr == nil {
				perr = ctx.Err()
			}
			break wait
		}
	}
	if len(acked) > 0 {
		if n.opt.Hook != nil {
			n.opt.Hook("acked")
		}
		err := <-n.store.Commit(func(tx *kv.Tx) error {
			deleted := int64(0)
			for _, seq := range acked {
				if tx.GetRaw(kv.BucketOutbox, kv.U64(seq)) == nil {
					continue
				}
				if err := tx.Delete(kv.BucketOutbox, kv.U64(seq)); err != nil {
					return err
				}
				deleted++
			}
			if _, err := tx.AddCounter(metaSent, deleted); err != nil {
				return err
			}
			_, err := tx.AddCounter(metaOutbox, -deleted)
			return err
		})
		if err != nil {
			return len(batch), fmt.Errorf("store: %w", err)
		}
		n.pokeState() // the state loop reads the new counts (and Status's figures)
	}
	return len(batch), perr
}
