package plan

// Purpose tags: the first coordinate of every mix stream, so that streams of
// different purposes never coincide even when their other coordinates do.
// Changing a value changes every plan; they are pinned by golden tests.
const (
	tagOrder      uint64 = 0x6f72646572       // "order"
	tagHoldout    uint64 = 0x686f6c646f7574   // "holdout"
	tagShuffle    uint64 = 0x73687566666c65   // "shuffle": block assignment
	tagShuffleBlk uint64 = 0x736875666662     // "shuffb": shuffle inside a block
	tagRelation   uint64 = 0x72656c6174696f6e // "relation"
)
