/* A job result with known numbers, for utgt-bench report tests. */
#ifndef BENCH_RES_FIXTURE_H
#define BENCH_RES_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "initiator/results.h"

/* 1000 reads of 4 KiB in 2 s, clat 100..1099 us; 2 paths sharing 600/400. */
static inline void fixture_res(struct ub_job_res *r, const char *name, unsigned groupid)
{
	cr_assert(ub_res_init(r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->groupid = groupid;
	r->rw = UB_RW_RANDREAD;
	r->bs = 4096;
	r->iodepth = 8;
	r->runtime_ns = 2000000000ull;
	snprintf(r->engine, sizeof(r->engine), "iscsi");
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t clat = 100000 + i * 1000;
		r->d[0].ios++;
		r->d[0].bytes += 4096;
		ub_lat_add(&r->d[0].slat, 500);
		ub_lat_add(&r->d[0].clat, clat);
		ub_lat_add(&r->d[0].lat, clat + 500);
		ub_hist_add(r->d[0].clat_hist, clat);
	}
	ub_res_add_sec(&r->d[0], 1024000, 250);
	ub_res_add_sec(&r->d[0], 3072000, 750);
	r->issued[0] = 1000;
	r->depth[3] = 1000;
	r->npaths = 2;
	for (int p = 0; p < 2; p++) {
		snprintf(r->paths[p].url, sizeof(r->paths[p].url), "iscsi://127.0.0.1:%d/iqn.t/0",
			 3260 + p);
		snprintf(r->paths[p].state, sizeof(r->paths[p].state), "up");
		r->paths[p].alua = 0x10;
		r->paths[p].ios[0] = p ? 400 : 600;
		r->paths[p].bytes[0] = r->paths[p].ios[0] * 4096;
		r->paths[p].lat_ns[0] = r->paths[p].ios[0] * 600000;
	}
	r->paths[1].failures = 1;
	r->paths[1].reconnects = 1;
	r->events = calloc(1, sizeof(*r->events));
	r->nevents = 1;
	r->events[0].t_ns = 1500000000ull;
	r->events[0].path = 1;
	snprintf(r->events[0].msg, sizeof(r->events[0].msg), "path 1 failed: test");
	snprintf(r->lu, sizeof(r->lu), "naa.60a5");
	r->lu_bs = 512;
	r->lu_blocks = 131072;
}

/* Run a printer into a string. */
#define CAPTURE(buf, call)                                                                         \
	do {                                                                                       \
		size_t len_;                                                                       \
		FILE *f = open_memstream(&(buf), &len_);                                           \
		call;                                                                              \
		fclose(f);                                                                         \
	} while (0)

#endif
