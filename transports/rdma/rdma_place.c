/* pin auto's decision (rdma_int.h): where an event thread should run, from how many requests
 * its connections had in progress when each of the last window's receives arrived.
 *
 * At queue depth 1 every receive finds only itself in progress: the initiator waits for each
 * answer, and what costs is the wake-up of a thread on another CPU (on a software device, two
 * per command: ours, and the initiator's when the answer is completed on our CPU), so the
 * thread is best on the CPU the requests come from.  With more in flight, receives arrive
 * while earlier ones are still in progress, and the work (with rxe, the send processing of
 * both sides) needs a CPU of its own beside the initiator's: the scheduler places the thread.
 * The gap between the two thresholds keeps a thread from moving back and forth at depth 1-2. */
#include "transports/rdma/rdma_int.h"

int rdma_place_cpu(unsigned recvs, unsigned depth, int hint, int cur)
{
	if (!recvs)
		return cur;
	/* mean depth <= 1.25: one at a time */
	if ((uint64_t)depth * 4 <= (uint64_t)recvs * 5)
		return hint >= 0 && hint < CPU_SETSIZE ? hint : -1;
	/* mean depth >= 2 */
	if ((uint64_t)depth >= (uint64_t)recvs * 2)
		return -1;
	return cur;
}

/* With poll_us the thread spins on its queues for a while after each burst: on the initiator's
 * CPU that spinning would take the CPU the next command has to be submitted from, so a thread
 * that polls is pinned beside it (the next CPU) instead, where it sees the next command without
 * being woken and neither CPU switches between processes for it. */
int rdma_place_beside(int cpu, long ncpus)
{
	if (cpu < 0 || ncpus < 2)
		return cpu;
	return (int)((cpu + 1) % ncpus);
}
