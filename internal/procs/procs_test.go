package procs

import (
	"runtime"
	"testing"
)

// restore puts GOMAXPROCS and the reservation back as they were.
func restore(t *testing.T) {
	p := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		reserved.Store(0)
		runtime.GOMAXPROCS(p)
	})
}

func TestReserve(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	restore(t)
	p := runtime.GOMAXPROCS(0)
	if got := Compute(); got != p {
		t.Fatalf("Compute before Reserve = %d, want GOMAXPROCS %d", got, p)
	}
	Reserve(4)
	if got := runtime.GOMAXPROCS(0); got != p+4 {
		t.Fatalf("GOMAXPROCS after Reserve(4) = %d, want %d", got, p+4)
	}
	if got := Compute(); got != p {
		t.Fatalf("Compute after Reserve(4) = %d, want %d", got, p)
	}
	Reserve(2) // less than reserved: nothing changes
	Reserve(4)
	if got := runtime.GOMAXPROCS(0); got != p+4 {
		t.Fatalf("GOMAXPROCS after Reserve(2), Reserve(4) = %d, want %d", got, p+4)
	}
	Reserve(6) // more: the difference is added
	if got, c := runtime.GOMAXPROCS(0), Compute(); got != p+6 || c != p {
		t.Fatalf("after Reserve(6): GOMAXPROCS %d, Compute %d; want %d and %d", got, c, p+6, p)
	}
}

func TestReserveLeavesTheUsersSetting(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3")
	restore(t)
	p := runtime.GOMAXPROCS(0)
	Reserve(4)
	if got, c := runtime.GOMAXPROCS(0), Compute(); got != p || c != p {
		t.Fatalf("with GOMAXPROCS set: GOMAXPROCS %d, Compute %d; want both %d", got, c, p)
	}
}

func TestComputeAtLeastOne(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	restore(t)
	Reserve(2)
	runtime.GOMAXPROCS(1) // someone lowered it below the reservation
	if got := Compute(); got != 1 {
		t.Fatalf("Compute = %d, want 1", got)
	}
}
