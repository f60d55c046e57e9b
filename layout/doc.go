// Package layout draws a store's host graph as a map: it finds its
// communities by Louvain modularity optimisation (Communities) and places
// every host with ForceAtlas2 as Gephi runs it (Positions), starting each
// community together, so that a community's hosts sit side by side.
// Compute does both for a Graph, an undirected graph with weighted edges
// built with a Builder or read from a store (Read); the result depends on
// the graph alone (every random choice comes from a fixed seed).
//
// `weaver layout` keeps a layout in the store (ComputeStored, Save),
// stamped with the graph it was computed for (Stamp: the store's node and
// edge counts and total weight), so that the exports take the stored one
// while it is fresh (Load, Fresh, Walker) and compute one in memory when
// it is not.
package layout
