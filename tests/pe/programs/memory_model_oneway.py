"""One-way producer/consumer checks of the memory model, one rule per run.

    memory_model_oneway.py RULES [ITERATIONS] [--break GUARANTEE]

RULES: one rule, a comma-separated list, "host" (every host-API rule but sync_bug) or
"all" (those and the device rules).

PE 0 produces, PE 1 consumes (other PEs only join the barriers). Each iteration i the
producer moves a payload whose every element is i, orders it by the rule under test,
then raises a flag to i; the consumer, on seeing the flag, checks the whole payload,
then acknowledges (an atomic on the producer) so the next payload cannot overwrite a
late one unseen. Data flows one way: the consumer sends nothing that could stand in for
late data the way a symmetric ring's own send does.

Rules (host API unless device_*):
  fence          put(data), fence, put(flag)
  quiet          put(data), quiet, put(flag)
  put_signal     put_signal(data, signal = i)
  put_signal_nbi put_signal_nbi(data, signal = i)
  put_signal_strided  put_signal from a strided source (the iput + signal path)
  put_nbi_quiet  put_nbi(data from a reused source), quiet, atomic_set(flag)
  get_nbi_quiet  the consumer get_nbi's the producer's array after the flag, quiet, checks
  amo_fence      atomic_set on each payload word, fence, atomic_add(flag, 1)
  barrier        put(data), barrier_all; every PE checks after the barrier
  sync_bug       put(data), sync_all: a user bug (sync_all completes no put) that the
                 ordering check must catch; fine in the normal mode on one node
  device_fence, device_quiet, device_put_signal, device_put_nbi_quiet
                 the same from a CUDA C++ kernel of the CPU build (through the proxy)

``--break G`` removes guarantee G (pyshmem's test hook: fence, quiet or put_signal)
before the run, to show that the rule's check catches its absence. A violation raises
AssertionError naming the iteration; success prints ``OK pe=<me> rule=<rule>``.
"""

import argparse

import numpy as np

import pyshmem as shmem
from pyshmem._lib import lib

ap = argparse.ArgumentParser()
ap.add_argument("rule")
ap.add_argument("iterations", type=int, nargs="?", default=40)
ap.add_argument("--break", dest="broken", default="")
args = ap.parse_args()

me, npes = shmem.my_pe(), shmem.n_pes()
assert npes >= 2, "needs 2 PEs"
PRODUCER, CONSUMER = 0, 1
N = args.iterations
WORDS = 512  # int64 payload elements
if args.broken:
    assert lib.break_guarantee(args.broken), args.broken

data = shmem.zeros(WORDS, np.int64)
flag = shmem.zeros(1, np.int64)
sig = shmem.new_signal()
src = shmem.zeros(WORDS, np.int64)  # get_nbi_quiet: the producer's array the consumer reads
ack = shmem.zeros(1, np.int64)  # on the producer: the last iteration the consumer checked
shmem.barrier_all()


def check_payload(payload, i, what):
    wrong = payload != i
    if wrong.any():
        raise AssertionError(
            f"PE {me}: rule {args.rule}, iteration {i}: after {what}, {int(np.count_nonzero(wrong))} of "
            f"{payload.size} payload words are not yet the payload (got {payload[wrong][:3]}, expected {i}): "
            f"the data arrived after what ordered it"
        )


def consume(wait_for, payload=data, what="the flag"):
    """Consumer loop: wait_for(i) returns once iteration i's flag is seen; then the payload
    must be iteration i's, and the producer is told it may go on."""
    for i in range(1, N + 1):
        wait_for(i)
        check_payload(payload, i, what)
        shmem.atomic_set(ack, i, PRODUCER)


def produced(i):
    """Producer: waits until the consumer has checked iteration i (the acknowledgement
    paces the stream, so a later payload cannot overwrite a late one unseen)."""
    shmem.wait_until(ack, shmem.CMP.GE, i)


def wait_flag(i):
    shmem.wait_until(flag, shmem.CMP.GE, i)


def wait_signal(i):
    shmem.signal_wait_until(sig, shmem.CMP.GE, i)


def host_rule(rule):
    if rule in ("barrier", "sync_bug"):
        for i in range(1, N + 1):
            if me == PRODUCER:
                shmem.put(data, np.full(WORDS, i, np.int64), CONSUMER)
            if rule == "barrier":
                shmem.barrier_all()
            else:
                shmem.sync_all()  # BUG: sync_all orders local stores only; quiet or barrier_all is needed
            if me == CONSUMER:
                check_payload(data, i, "barrier_all" if rule == "barrier" else "sync_all")
                shmem.atomic_set(ack, i, PRODUCER)
            elif me == PRODUCER:
                produced(i)  # the next put must not land before this iteration's check
        return
    if rule == "get_nbi_quiet":
        mine = np.zeros(WORDS, np.int64)
        if me == PRODUCER:
            for i in range(1, N + 1):
                src[:] = i  # local stores to my symmetric array
                shmem.quiet()
                shmem.atomic_set(flag, i, CONSUMER)
                produced(i)
        elif me == CONSUMER:
            def wait_then_get(i):
                wait_flag(i)
                shmem.get_nbi(mine, src, PRODUCER)
                shmem.quiet()  # mine is valid only now
            consume(wait_then_get, mine, "the flag, then get_nbi + quiet")
        return
    if me == PRODUCER:
        reused = np.zeros(WORDS, np.int64)
        for i in range(1, N + 1):
            payload = np.full(WORDS, i, np.int64)
            if rule == "fence":
                shmem.put(data, payload, CONSUMER)
                shmem.fence()
                shmem.put(flag, np.array([i], np.int64), CONSUMER)
            elif rule == "quiet":
                shmem.put(data, payload, CONSUMER)
                shmem.quiet()
                shmem.put(flag, np.array([i], np.int64), CONSUMER)
            elif rule == "put_signal":
                shmem.put_signal(data, payload, CONSUMER, sig, i, shmem.SIGNAL_SET)
            elif rule == "put_signal_nbi":
                shmem.put_signal_nbi(data, payload, CONSUMER, sig, i, shmem.SIGNAL_SET)
            elif rule == "put_signal_strided":  # a strided source: an iput, then the signal
                shmem.put_signal(data, np.full(2 * WORDS, i, np.int64)[::2], CONSUMER, sig, i, shmem.SIGNAL_SET)
            elif rule == "put_nbi_quiet":
                reused[:] = i
                shmem.put_nbi(data, reused, CONSUMER)
                shmem.quiet()  # the put is complete: the source may change, the flag may go
                shmem.atomic_set(flag, i, CONSUMER)
            elif rule == "amo_fence":
                for w in range(WORDS):
                    shmem.atomic_set(data[w:w + 1], i, CONSUMER)
                shmem.fence()
                shmem.atomic_add(flag, 1, CONSUMER)
            else:
                raise SystemExit(f"unknown rule {rule}")
            produced(i)
            if rule == "put_signal_nbi":
                shmem.quiet()  # its source may go now
    elif me == CONSUMER:
        consume(wait_signal, what="the signal") if rule.startswith("put_signal") else consume(wait_flag)


DEVICE_SOURCE = r"""
#include <pyshmem/device.cuh>

// One thread streams N payloads to `consumer`, ordered by `rule` (0 fence, 1 quiet,
// 2 put_signal, 3 put_nbi + quiet); `staging` is this PE's own buffer, reused.
// After each payload it waits for the consumer's acknowledgement in `ack`.
extern "C" __global__ void produce(long long* data, long long* flag, uint64_t* sig, long long* staging,
                                   long long* ack, unsigned long long words, int consumer, int rule, long long n) {
  for (long long i = 1; i <= n; ++i) {
    for (unsigned long long w = 0; w < words; ++w) staging[w] = i;
    switch (rule) {
      case 0:
        pyshmem::put(data, staging, words, consumer);
        pyshmem::fence();
        pyshmem::p(flag, i, consumer);
        break;
      case 1:
        pyshmem::put(data, staging, words, consumer);
        pyshmem::quiet();
        pyshmem::p(flag, i, consumer);
        break;
      case 2:
        pyshmem::put_signal(data, staging, words, sig, static_cast<uint64_t>(i), PYSHMEM_SIGNAL_SET, consumer);
        break;
      case 3:
        pyshmem::put_nbi(data, staging, words, consumer);
        pyshmem::quiet();  // before the staging buffer is rewritten, and before the flag
        pyshmem::atomic_set(flag, i, consumer);
        break;
    }
    pyshmem::wait_until(ack, PYSHMEM_CMP_GE, i);
  }
  pyshmem::quiet();
}
"""
DEVICE_RULES = {"device_fence": 0, "device_quiet": 1, "device_put_signal": 2, "device_put_nbi_quiet": 3}


_device = {}


def device_rule(rule):
    from pyshmem import cuda as pcuda

    if not _device:  # built once per run
        _device["staging"] = shmem.zeros(WORDS, np.int64)
        module = pcuda.Module(DEVICE_SOURCE, name="memory_model_oneway", target="cpu")
        _device["kernel"] = module.get_kernel("produce")
    staging, kernel = _device["staging"], _device["kernel"]
    shmem.barrier_all()
    if me == PRODUCER:
        pcuda.launch(kernel, 1, 1, data, flag, sig, staging, ack, np.uint64(WORDS), np.int32(CONSUMER),
                     np.int32(DEVICE_RULES[rule]), np.int64(N))
    elif me == CONSUMER:
        consume(wait_signal, what="the signal") if rule == "device_put_signal" else consume(wait_flag)


HOST_RULES = ["fence", "quiet", "put_signal", "put_signal_nbi", "put_signal_strided", "put_nbi_quiet",
              "get_nbi_quiet", "amo_fence", "barrier"]
rules = {"host": HOST_RULES, "all": HOST_RULES + list(DEVICE_RULES)}.get(args.rule, args.rule.split(","))
for rule in rules:
    args.rule = rule
    for a in (data, flag, sig, src, ack):
        a[...] = 0
    shmem.barrier_all()
    device_rule(rule) if rule in DEVICE_RULES else host_rule(rule)
    shmem.barrier_all()
if args.broken:
    lib.break_guarantee("")
print(f"OK pe={me} rules={','.join(rules)}", flush=True)
