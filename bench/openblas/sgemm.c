/*
 * sgemm: OpenBLAS single-threaded sgemm at the shapes of internal/kern's
 * BenchmarkGemm, printed as Go benchmark lines so that benchstat can put
 * them next to the Go figures. Not part of the Go build; see run.sh.
 *
 *   cc -O2 -o sgemm sgemm.c -lopenblas && OPENBLAS_NUM_THREADS=1 ./sgemm [count]
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern char *openblas_get_corename(void);
extern void openblas_set_num_threads(int);

static double clock_s(clockid_t id) {
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* wall clock, and the CPU time of this thread (where single-threaded
   OpenBLAS runs): the same two clocks as the Go benchmarks report */
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

static float *randm(size_t n) {
	float *p = malloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)rand() / RAND_MAX - 0.5f;
	return p;
}

/* op: 0 = NT (C = A·Bᵀ), 1 = NN (C = A·B), 2 = TN (C += Aᵀ·B). */
static void run(int op, int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc) {
	switch (op) {
	case 0:
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc);
		break;
	case 1:
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc);
		break;
	default:
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1, a, lda, b, ldb, 1, c, ldc);
	}
}

int main(int argc, char **argv) {
	int count = argc > 1 ? atoi(argv[1]) : 1;
	const int pos = 50, cand = 1050;
	const char *names[] = {"NT", "NN", "TN"};
	openblas_set_num_threads(1);
	fprintf(stderr, "openblas core: %s\n", openblas_get_corename());
	for (int rep = 0; rep < count; rep++) {
		int dims[] = {100, 400};
		for (int di = 0; di < 2; di++) {
			int d = dims[di];
			for (int op = 0; op < 3; op++) {
				int m, n, k, lda, ldb, ldc;
				size_t al, bl;
				if (op == 0) { m = pos; n = cand; k = d; lda = d; ldb = d; ldc = cand; al = pos * d; bl = cand * d; }
				else if (op == 1) { m = pos; n = d; k = cand; lda = cand; ldb = d; ldc = d; al = pos * cand; bl = cand * d; }
				else { m = cand; n = d; k = pos; lda = cand; ldb = d; ldc = d; al = pos * cand; bl = pos * d; }
				float *a = randm(al), *b = randm(bl), *c = randm((size_t)m * ldc);
				run(op, m, n, k, a, lda, b, ldb, c, ldc);
				/* as Go does: grow the iteration count until a run lasts 0.5 s */
				long iters = 1;
				double t, tc;
				for (;;) {
					double t0 = now(), c0 = cpu();
					for (long i = 0; i < iters; i++)
						run(op, m, n, k, a, lda, b, ldb, c, ldc);
					t = now() - t0;
					tc = cpu() - c0;
					if (t >= 0.5)
						break;
					iters = t > 0.01 ? (long)(iters * 1.2 / t) + 1 : iters * 100;
				}
				double ns = t * 1e9 / iters;
				printf("BenchmarkGemm/op=%s/d=%d/impl=openblas-2\t%ld\t%.0f ns/op\t%.2f GFLOP/s\t%.2f cpu-GFLOP/s\n",
				       names[op], d, iters, ns, 2.0 * m * n * k / ns, 2.0 * m * n * k * iters / tc / 1e9);
				fflush(stdout);
				free(a); free(b); free(c);
			}
		}
	}
	return 0;
}
