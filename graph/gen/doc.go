// Package gen generates synthetic edge lists for benchmarks and tests: a
// Chung-Lu style random graph whose degree distribution follows a power law,
// like a social network's, with optional planted communities.
//
// Every entity i (named "e<i>") has a weight (i+1)^-Zipf; each edge picks
// its lhs with probability proportional to the weights, so the entity of
// rank r has an expected degree proportional to r^-Zipf and the degree
// distribution has a tail P(degree >= d) ~ d^(-1/Zipf). Zipf = 0 is the
// uniform graph. With Communities = C > 1, entity i belongs to community
// i mod C, and a fraction PIn of the edges draw their rhs among the lhs's
// community (by the same weights); the others draw it from all entities,
// so that held-out edges are predictable from the community structure.
// Relations ("r<k>") are uniform.
//
// Invariants:
//  1. The output is a function of Params alone: the same parameters give
//     the same bytes on one architecture. (Weights come from math.Pow, which
//     is not pinned across architectures; the sampling itself is integer.)
//  2. Each edge costs O(1): entities are drawn from alias tables (Vose),
//     built once in O(Entities).
//  3. No self-loops unless an entity has no other choice (Entities = 1 or
//     a one-member community); duplicate edges may occur, as in real data.
package gen
