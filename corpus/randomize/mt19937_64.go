package randomize

// mt64 is the 64-bit Mersenne Twister MT19937-64 (Matsumoto and Nishimura,
// 2004), the generator C++ calls std::mt19937_64. The cntk randomizer needs
// its exact output stream; nothing else in batchprep uses it.
//
// Parameters: degree n = 312 words, middle word m = 156, twist matrix
// 0xB5026F5AA96619E9, 31 low bits in the lower mask, tempering shifts
// (29, 17, 37, 43) with masks (0x5555555555555555, 0x71D67FFFEDA60000,
// 0xFFF7EEE000000000), initialization multiplier 6364136223846793005.
type mt64 struct {
	state [mtN]uint64
	next  int // index of the next word to temper; mtN forces a regeneration
}

const (
	mtN     = 312
	mtM     = 156
	mtA     = 0xB5026F5AA96619E9
	mtUpper = 0xFFFFFFFF80000000 // the top 33 bits
	mtLower = 0x000000007FFFFFFF // the bottom 31 bits
)

// newMT64 returns a generator seeded as std::mt19937_64(seed) is.
func newMT64(seed uint64) *mt64 {
	g := &mt64{}
	g.Seed(seed)
	return g
}

// Seed resets the generator to the stream of seed.
func (g *mt64) Seed(seed uint64) {
	g.state[0] = seed
	for i := 1; i < mtN; i++ {
		prev := g.state[i-1]
		g.state[i] = 6364136223846793005*(prev^(prev>>62)) + uint64(i)
	}
	g.next = mtN
}

// twist regenerates all mtN words of state.
func (g *mt64) twist() {
	s := &g.state
	for i := 0; i < mtN; i++ {
		y := s[i]&mtUpper | s[(i+1)%mtN]&mtLower
		v := s[(i+mtM)%mtN] ^ y>>1
		if y&1 != 0 {
			v ^= mtA
		}
		s[i] = v
	}
	g.next = 0
}

// Uint64 returns the next output.
func (g *mt64) Uint64() uint64 {
	if g.next >= mtN {
		g.twist()
	}
	x := g.state[g.next]
	g.next++
	x ^= (x >> 29) & 0x5555555555555555
	x ^= (x << 17) & 0x71D67FFFEDA60000
	x ^= (x << 37) & 0xFFF7EEE000000000
	x ^= x >> 43
	return x
}
