// Package cluster makes a crawl one shard of several, over NATS JetStream.
//
// Every host belongs to one shard (package shard: rendezvous hashing of
// its registrable domain). A shard's bbolt store holds its own hosts'
// frontier, nodes and robots.txt cache, and every edge whose source it
// owns. A link to another shard's host is written, in the page's own
// transaction, to the store's outbox; a publisher hands outbox entries to
// the owner's subject of a work-queue stream with a deterministic
// Nats-Msg-Id and deletes them once the stream has acknowledged them. Each
// shard pulls its subject with a durable consumer, applies each link to
// its frontier in one transaction (recording the message as applied, in
// the inbox), then acknowledges it. Nothing is lost: an outbox entry lives
// until the stream holds it, a message until the shard's store holds it;
// a repeat of either is recognised (JetStream's duplicate window, the
// inbox).
//
// The crawl ends when the whole cluster is quiescent (quiesce.go).
package cluster
