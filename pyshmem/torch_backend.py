"""The ``torch.distributed`` backend named ``pyshmem``: ``dist.init_process_group("pyshmem")``
after ``import pyshmem.torch``, under torchrun (or anything that gives torch a store).

The default group starts pyshmem through torch's store (pyshmem/bootstrap_store.py)
unless the program already started it (under shmemrun: the ranks must be the PEs), and
allocates the symmetric staging buffers (pyshmem/torch_staging.py). Tensors are copied
into staging and back (one copy each way; larger tensors in chunks). On the default
group, all-reduce and broadcast run pyshmem's team collectives (csrc/coll/), all-gather
fcollect and even all-to-all alltoall, on the tensors in place when they are large and
symmetric on every rank (IN_PLACE_MIN); the rest, and every operation of a subgroup,
run the staging module's member-only pull exchange. Every operation but a send
completes before it returns (``async_op=True`` gives a completed work handle); a send
whose receiver lags is posted by the outbox thread (pyshmem/torch_p2p.py).

CPU tensors only for now; CUDA tensors and the operations below the table raise a
RuntimeError naming the operation.
"""

import os

import numpy as np
import torch
import torch.distributed as dist

import pyshmem as shmem
from pyshmem import bootstrap_store, runtime
from pyshmem.torch_staging import Staging, agree_slot, heap_offsets
from pyshmem.torch_work import Done as _Done, Posting as _Posting

_native_reduce = shmem.reduce
_R = dist.ReduceOp
_staging = None  # created with the default group, shared by every group
_world_groups = 0  # groups of every rank made so far (the default one first)

# torch reduce op -> (pyshmem's native op name, the combining function of the pull path)
_OPS = {
    _R.SUM: ("sum", torch.add), _R.AVG: ("sum", torch.add), _R.PRODUCT: ("prod", torch.mul),
    _R.MIN: ("min", torch.minimum), _R.MAX: ("max", torch.maximum), _R.BAND: ("and", torch.bitwise_and),
    _R.BOR: ("or", torch.bitwise_or), _R.BXOR: ("xor", torch.bitwise_xor),
}
_NATIVE_DTYPES = {torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.float32, torch.float64}
# The same as NumPy types, for the fast path (NumPy views and pyshmem's C verbs: torch
# ops and pybind11 enums cost microseconds each, the whole of a small all-reduce).
_NUMPY = {t: torch.empty(0, dtype=t).numpy().dtype for t in _NATIVE_DTYPES}
_OPS_BY_INT = {int(k): (k, *v) for k, v in _OPS.items()}
_NUMPY_ANY = {torch.bool, torch.float16, torch.complex64, torch.complex128, *_NATIVE_DTYPES}
_AVG = int(_R.AVG)
# From this size (of a call's largest tensor) a default-group all-reduce, broadcast,
# all-gather or even all-to-all first asks whether every rank passed symmetric tensors
# at the same offsets (one small reduction) and then works on the tensors in place,
# skipping the staging copies; below it the copies are cheaper.
IN_PLACE_MIN = 256 << 10


def _all_symmetric(*views):
    """True when, for each of `views` (at most four), every rank's view is symmetric
    memory at the same heap offset and none of a rank's views overlap (collective over
    the default group; the same answer on every rank)."""
    return all(_staging.agree(heap_offsets(views)))


def _op_type(op):
    """The RedOpType of a ReduceOp (or RedOpType)."""
    return getattr(op, "op", op)


class ProcessGroupPyshmem(dist.ProcessGroup):
    """One torch process group on pyshmem (see the module doc). Made by torch through
    the registered creator; not meant to be constructed by hand."""

    def __init__(self, rank, size, pes):
        super().__init__(rank, size)
        self._pes = pes  # world PE of each group rank
        self._slot = None  # the barrier counter slot of a subgroup (agree_slot)
        self._name = ""
        self._world = pes == list(range(shmem.n_pes()))

    def getBackendName(self):
        return "pyshmem"

    # torch reads a group's name from its registered Backend objects, which a group
    # that is itself the backend has none of; destroy_process_group(group) needs it.
    group_name = property(lambda self: self._name, doc="torch's name of this group")

    # ---- helpers ------------------------------------------------------------------

    def _check(self, what, *tensors):
        for t in tensors:
            if not isinstance(t, torch.Tensor):
                raise RuntimeError(f"pyshmem backend: {what}: expected tensors, got {type(t).__name__}")
            if not t.is_cpu:
                raise RuntimeError(f"pyshmem backend: {what}: {t.device} tensors are not supported yet (CPU tensors "
                                   "only); use the nccl or gloo backend for them")
            if not t.is_contiguous():
                raise RuntimeError(f"pyshmem backend: {what}: tensors must be contiguous")

    @staticmethod
    def _bytes(t):
        """A uint8 NumPy view of contiguous tensor t's memory (through NumPy when it has
        the type: fewer torch ops, each of which costs about a microsecond)."""
        if t.dtype in _NUMPY_ANY:
            return (t.detach() if t.requires_grad else t).numpy().reshape(-1).view(np.uint8)
        return t.detach().reshape(-1).view(torch.uint8).numpy()

    def _stage_typed(self, buf, dtype, count):
        return torch.from_numpy(buf[:count * dtype.itemsize]).view(dtype)

    def _whole_of_parts(self, what, whole, whole_role, part, part_role):
        """The group size, after checking that `whole` holds that many `part`s of its dtype."""
        p = len(self._pes)
        if whole.numel() != p * part.numel() or whole.dtype != part.dtype:
            raise RuntimeError(f"pyshmem backend: {what}: {whole_role} must have {p} x {part_role}'s elements "
                               f"({p * part.numel()}) of its dtype, not {whole.numel()} of {whole.dtype}")
        return p

    def _in_place(self, *views):
        """Whether a default-group collective on `views` (the same sizes on every rank)
        may skip staging (collective on the default group when they are large enough:
        every rank takes the same branch)."""
        return self._world and max(v.nbytes for v in views) >= IN_PLACE_MIN and _all_symmetric(*views)

    def _barrier(self):
        if self._world:
            shmem.barrier_all()
        else:
            _staging.barrier(self._pes, self._slot)

    # ---- reductions -------------------------------------------------------------------

    def _reduce_into(self, t, op, what, root=None):
        """Reduce `t` with torch op `op` into `t` on every rank (root None) or on `root` only."""
        write = root is None or self.rank() == root
        entry = _OPS_BY_INT.get(int(_op_type(op)))
        if entry is None:
            raise RuntimeError(f"pyshmem backend: {what} with {_op_type(op)} is not supported (SUM, AVG, PRODUCT, MIN, "
                               "MAX, BAND, BOR, BXOR are)")
        kind, name, combine = entry
        avg = int(kind) == _AVG
        np_type = _NUMPY.get(t.dtype)
        if np_type is not None and name in ("and", "or", "xor") and np_type.kind == "f":
            raise RuntimeError(f"pyshmem backend: {what} with {kind} needs an integer tensor, not {t.dtype}")
        if self._world and np_type is not None and not (avg and np_type.kind != "f"):
            # Fast path: NumPy views of the tensor and the staging buffers, pyshmem's reduce.
            flat = (t.detach() if t.requires_grad else t).numpy().reshape(-1)
            # Only an all-reduce: reduce writes on its root alone, so it always stages.
            if root is None and self._in_place(flat):
                _native_reduce(flat, flat, name)
                if avg:
                    flat /= len(self._pes)
                return
            src_all, dst_all = _staging.typed(np_type)
            step = src_all.size
            for a in range(0, flat.size, step):
                b = min(flat.size, a + step)
                src, dst = src_all[:b - a], dst_all[:b - a]
                src[:] = flat[a:b]
                _native_reduce(dst, src, name)
                if write:
                    flat[a:b] = dst / len(self._pes) if avg else dst
            return
        if t.dtype == torch.bool:  # as NCCL does: SUM is OR, PRODUCT is AND
            name, combine = {"sum": ("max", torch.maximum), "prod": ("min", torch.minimum)}.get(name, (name, combine))
        if avg and not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"pyshmem backend: {what} with AVG needs a floating-point tensor, not {t.dtype}")
        if name in ("and", "or", "xor") and (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"pyshmem backend: {what} with {kind} needs an integer tensor, not {t.dtype}")
        work = torch.uint8 if t.dtype == torch.bool else t.dtype
        if work in (torch.float16, torch.bfloat16):
            work = torch.float32  # combined in float32, rounded once at the end
        flat = t.detach().reshape(-1)
        step = max(1, _staging.half // work.itemsize)
        for a in range(0, flat.numel(), step):
            b = min(flat.numel(), a + step)
            if self._world and work in _NATIVE_DTYPES:
                src = self._stage_typed(_staging.inbuf, work, b - a)
                dst = self._stage_typed(_staging.outbuf, work, b - a)
                src.copy_(flat[a:b])
                _native_reduce(dst, src, name)
            else:
                dst = self._pull_reduce(flat[a:b], work, combine)
            if avg:
                dst = dst / len(self._pes)
            if write:
                flat[a:b].copy_(dst)

    def _pull_reduce(self, chunk, work, combine):
        """Combines every member's `chunk` (same size) in member order (the same bits
        on every member) through the pull exchange."""
        n = chunk.numel()
        self._stage_typed(_staging.inbuf, work, n).copy_(chunk)
        self._barrier()
        acc = self._pull_combine(n, work, combine, 0)
        self._barrier()
        return acc

    def _pull_combine(self, n, work, combine, offset):
        """Every member's `n` elements of `work` at byte `offset` of its inbuf,
        combined in member order."""
        acc, part = None, torch.empty(n, dtype=work)
        for pe in self._pes:
            _staging.pull(self._bytes(part), pe, offset)
            acc = part.clone() if acc is None else combine(acc, part)
        return acc

    def allreduce(self, tensors, opts):
        self._check("all_reduce", *tensors)
        for t in tensors:
            self._reduce_into(t, opts.reduceOp, "all_reduce")
        return _Done(tensors)

    def reduce(self, tensors, opts):
        self._check("reduce", *tensors)
        for t in tensors:
            self._reduce_into(t, opts.reduceOp, "reduce", root=opts.rootRank)
        return _Done(tensors)

    def reduce_scatter_single(self, output, input, opts):
        self._check("reduce_scatter_tensor", output, input)
        p = self._whole_of_parts("reduce_scatter_tensor", input, "input", output, "output")
        self._reduce_scatter(output, list(input.detach().reshape(p, -1)), opts.reduceOp, "reduce_scatter_tensor")
        return _Done([output])

    def reduce_scatter(self, outputs, input_lists, opts):
        self._check("reduce_scatter", *outputs, *[t for lst in input_lists for t in lst])
        for out, ins in zip(outputs, input_lists):
            if len(ins) != len(self._pes) or any(t.numel() != out.numel() or t.dtype != out.dtype for t in ins):
                raise RuntimeError(f"pyshmem backend: reduce_scatter: needs {len(self._pes)} inputs shaped like the "
                                   "output")
            self._reduce_scatter(out, ins, opts.reduceOp, "reduce_scatter")
        return _Done(outputs)

    def _reduce_scatter(self, output, blocks, op, what):
        """output <- the combination over members of their blocks[my rank]."""
        kind = _op_type(op)
        if kind not in _OPS or output.dtype == torch.bool:
            raise RuntimeError(f"pyshmem backend: {what} with {kind} on {output.dtype} is not supported")
        _, combine = _OPS[kind]
        p, me, n = len(self._pes), self.rank(), output.numel()
        work = torch.float32 if output.dtype in (torch.float16, torch.bfloat16) else output.dtype
        step = max(1, _staging.half // work.itemsize // p)
        flat = output.detach().reshape(-1)
        for a in range(0, max(1, n), step):
            b = min(n, a + step)
            stage = self._stage_typed(_staging.inbuf, work, p * (b - a)).view(p, b - a)
            for i, blk in enumerate(blocks):
                stage[i].copy_(blk.reshape(-1)[a:b])
            self._barrier()
            acc = self._pull_combine(b - a, work, combine, me * (b - a) * work.itemsize)
            self._barrier()
            if kind == _R.AVG:
                acc = acc / p
            flat[a:b].copy_(acc)

    # ---- data movement --------------------------------------------------------------

    def broadcast(self, tensors, opts):
        self._check("broadcast", *tensors)
        root, me = opts.rootRank, self.rank()
        for t in tensors:
            data = self._bytes(t)
            if self._in_place(data):
                shmem.broadcast(data, data, root)
                continue
            for a in range(0, max(1, data.nbytes), _staging.half):
                piece = data[a:a + _staging.half]
                if me == root:
                    _staging.inbuf[:piece.nbytes] = piece
                if self._world:
                    shmem.broadcast(_staging.outbuf[:piece.nbytes], _staging.inbuf[:piece.nbytes], root)
                    if me != root:
                        piece[:] = _staging.outbuf[:piece.nbytes]
                else:
                    self._barrier()
                    if me != root:
                        _staging.pull(piece, self._pes[root], 0)
                    self._barrier()
        return _Done(tensors)

    def _gather_all(self, input, outputs):
        """outputs[i] <- member i's input (bytes), every member (all-gather)."""
        data, p = self._bytes(input), len(self._pes)
        outs = [self._bytes(o) for o in outputs]
        step = max(1, _staging.half // p)
        for a in range(0, max(1, data.nbytes), step):
            b = min(data.nbytes, a + step)
            if self._world:
                _staging.inbuf[:b - a] = data[a:b]
                shmem.fcollect(_staging.outbuf[:p * (b - a)], _staging.inbuf[:b - a])
                for i, o in enumerate(outs):
                    o[a:b] = _staging.outbuf[i * (b - a):(i + 1) * (b - a)]
            else:
                _staging.inbuf[:b - a] = data[a:b]
                self._barrier()
                for pe, o in zip(self._pes, outs):
                    _staging.pull(o[a:b], pe, 0)
                self._barrier()

    def all_gather_single(self, output, input, opts):
        self._check("all_gather_into_tensor", output, input)
        p = self._whole_of_parts("all_gather_into_tensor", output, "output", input, "input")
        src, dst = self._bytes(input), self._bytes(output)
        if self._in_place(dst, src):
            shmem.fcollect(dst, src)
            return _Done([output])
        self._gather_all(input, list(output.detach().reshape(p, -1)))
        return _Done([output])

    def allgather(self, output_lists, inputs, opts):
        self._check("all_gather", *inputs, *[t for lst in output_lists for t in lst])
        for outs, inp in zip(output_lists, inputs):
            if len(outs) != len(self._pes) or any(o.numel() != inp.numel() or o.dtype != inp.dtype for o in outs):
                raise RuntimeError(f"pyshmem backend: all_gather: needs {len(self._pes)} outputs shaped like the input")
            self._gather_all(inp, outs)
        return _Done(output_lists)

    def _exchange(self, sends, recvs, what):
        """Member-wise exchange: recvs[j] <- member j's sends[my rank] (uint8 views of
        any sizes). In rounds of q = staging / members bytes per block: in round c a
        member stages bytes [c·q, (c+1)·q) of its block for member j at j·q of its
        inbuf, and member j pulls them from there. Members agree on the number of
        rounds by publishing their largest block with the first round."""
        me, p = self.rank(), len(self._pes)
        q = max(1, _staging.half // p)
        longest = max([s.nbytes for s in sends] + [r.nbytes for r in recvs] + [0])
        rounds, c = 1, 0
        while c < rounds:
            for j, snd in enumerate(sends):
                piece = snd[c * q:(c + 1) * q]
                _staging.inbuf[j * q:j * q + piece.nbytes] = piece
            if c == 0:
                _staging.publish([longest])
            self._barrier()
            if c == 0:  # every member's largest block, published before the barrier
                longest = max(_staging.peer_meta(pe, 0) for pe in self._pes)
                rounds = max(1, -(-longest // q))
            for pe, r in zip(self._pes, recvs):
                piece = r[c * q:(c + 1) * q]
                if piece.nbytes:
                    _staging.pull(piece, pe, me * q)
            self._barrier()
            c += 1

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        self._check("all_to_all_single", output, input)
        p = len(self._pes)
        rows_in = input.shape[0] if input.dim() else 1
        row = input.numel() * input.element_size() // max(1, rows_in)
        ins = input_split_sizes or [rows_in // p] * p
        outs = output_split_sizes or [(output.shape[0] if output.dim() else 1) // p] * p
        if len(ins) != p or len(outs) != p or sum(ins) * row != input.numel() * input.element_size() \
                or sum(outs) * row != output.numel() * output.element_size() or input.dtype != output.dtype:
            raise RuntimeError(f"pyshmem backend: all_to_all_single: split sizes {list(ins)}/{list(outs)} do not "
                               f"match the input ({tuple(input.shape)}) and output ({tuple(output.shape)}) over "
                               f"{p} ranks")
        src, dst = self._bytes(input), self._bytes(output)
        even = len(set(ins)) == 1 and len(set(outs)) == 1 and ins[0] == outs[0]
        blk = ins[0] * row if even else -1
        if self._world:
            # pyshmem's alltoall needs one block size on every rank, which a rank's own
            # splits do not show (rank 0's may be even while another's are not): agreed,
            # with the tensors' heap offsets when in place could pay.
            big = blk * p >= IN_PLACE_MIN
            same_blk, *sym = _staging.agree([blk, *(heap_offsets([dst, src]) if big else [-1, -1])])
            even = same_blk
            if even and big and all(sym):
                shmem.alltoall(dst, src, size=blk)
                return _Done([output])
        if self._world and even and blk * p <= _staging.half:
            _staging.inbuf[:p * blk] = src
            shmem.alltoall(_staging.outbuf[:p * blk], _staging.inbuf[:p * blk], size=blk)
            dst[:] = _staging.outbuf[:p * blk]
            return _Done([output])
        cut = np.cumsum([0] + [n * row for n in ins])
        got = np.cumsum([0] + [n * row for n in outs])
        self._exchange([src[cut[j]:cut[j + 1]] for j in range(p)], [dst[got[j]:got[j + 1]] for j in range(p)],
                       "all_to_all_single")
        return _Done([output])

    def alltoall(self, output_tensors, input_tensors, opts):
        self._check("all_to_all", *output_tensors, *input_tensors)
        if len(output_tensors) != len(self._pes) or len(input_tensors) != len(self._pes):
            raise RuntimeError(f"pyshmem backend: all_to_all: needs {len(self._pes)} inputs and outputs")
        self._exchange([self._bytes(t) for t in input_tensors], [self._bytes(t) for t in output_tensors],
                       "all_to_all")
        return _Done(output_tensors)

    def gather(self, output_lists, inputs, opts):
        self._check("gather", *inputs, *[t for lst in output_lists for t in lst])
        root, me, p = opts.rootRank, self.rank(), len(self._pes)
        data = self._bytes(inputs[0])
        outs = [self._bytes(o) for o in output_lists[0]] if me == root else []
        if me == root and len(outs) != p:
            raise RuntimeError(f"pyshmem backend: gather: the root needs {p} outputs")
        self._exchange([data if j == root else data[:0] for j in range(p)],
                       outs if me == root else [data[:0]] * p, "gather")
        return _Done(output_lists)

    def scatter(self, outputs, input_lists, opts):
        self._check("scatter", *outputs, *[t for lst in input_lists for t in lst])
        root, me, p = opts.rootRank, self.rank(), len(self._pes)
        out = self._bytes(outputs[0])
        sends = [self._bytes(t) for t in input_lists[0]] if me == root else [out[:0]] * p
        self._exchange(sends, [out if j == root else out[:0] for j in range(p)], "scatter")
        return _Done(outputs)

    # ---- coalesced forms (DTensor and FSDP issue these): each tensor in turn --------

    def allreduce_coalesced(self, tensors, opts):
        return self.allreduce(tensors, opts)

    def _in_turn(self, what, outputs, inputs, opts, single, gather):
        """A coalesced form as its single op on each (output, input) pair, after checking
        every pair's shapes (a gather's output holds the group's inputs, a scatter's input
        the group's outputs), so a bad pair fails before any data moves."""
        self._check(what, *outputs, *inputs)
        for out, inp in zip(outputs, inputs, strict=True):
            if gather:
                self._whole_of_parts(what, out, "output", inp, "input")
            else:
                self._whole_of_parts(what, inp, "input", out, "output")
        for out, inp in zip(outputs, inputs):
            single(out, inp, opts)
        return _Done(outputs)

    def all_gather_single_coalesced(self, outputs, inputs, opts):
        return self._in_turn("all_gather_into_tensor (coalesced)", outputs, inputs, opts, self.all_gather_single, True)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):
        return self._in_turn("reduce_scatter_tensor (coalesced)", outputs, inputs, opts, self.reduce_scatter_single,
                             False)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    def allgather_coalesced(self, output_lists, inputs, opts):
        return self.allgather(output_lists, inputs, opts)

    def barrier(self, opts=None):
        shmem.quiet()
        self._barrier()
        return _Done([])

    def _group_id(self):
        # The same on every member: the subgroup's agreed slot, or (groups of every rank,
        # which every rank creates in the same order) -1 for the default group, -2, -3...
        return self._p2p_id

    def send(self, tensors, dst, tag):
        self._check("send", *tensors)
        posted = [_staging.mail.send(self._bytes(t), self._pes[dst], tag, self._group_id()) for t in tensors]
        return _Posting(tensors, [e for e in posted if e is not None], f"pyshmem backend: send to rank {dst}",
                        _staging.timeout)

    def recv(self, tensors, src, tag):
        self._check("recv", *tensors)
        for t in tensors:  # eager: an irecv receives before it returns (sends progress on their own)
            _staging.mail.complete(_staging.mail.recv(self._bytes(t), self._pes[src], tag, self._group_id(),
                                                      "pyshmem backend: recv"))
        return _Done(tensors, source=src)


def _unsupported(name, advice):
    def op(self, *args, **kwargs):
        raise RuntimeError(f"pyshmem backend: {name} is not supported; {advice}")
    op.__name__ = name
    return op


for _name, _advice in {
    "recv_anysource": "pass src= to recv (messages are matched per sender)",
    "monitored_barrier": "use barrier (a rank that never arrives ends the job at the group's timeout with a report)",
}.items():
    setattr(ProcessGroupPyshmem, _name, _unsupported(_name, _advice))


def _create(opts, pg_options):
    """torch's creator (extended API): the default group starts pyshmem and the
    staging buffers; a subgroup maps its ranks to world PEs."""
    global _staging
    rank, size = opts.group_rank, opts.group_size
    pes = list(opts.global_ranks_in_group) or list(range(size))
    if _staging is None:
        if not shmem.initialized():
            env = bootstrap_store.environment_from_store(opts.store, rank, size)
            seconds = opts.timeout.total_seconds() if opts.timeout else 0
            if seconds > 0 and "PYSHMEM_TIMEOUT" not in os.environ:
                # The group's timeout= bounds every wait, as torch's own backends bound
                # collectives: a hung one ends the job with pyshmem's report.
                env["PYSHMEM_TIMEOUT"] = f"{seconds:g}"
            runtime.init_from_environment(env)
            shmem.barrier_all()  # every PE has read the rendezvous
            bootstrap_store.forget_secret(opts.store, rank, size)
        if shmem.n_pes() != size or shmem.my_pe() != rank:
            raise RuntimeError(f"pyshmem backend: pyshmem runs as PE {shmem.my_pe()} of {shmem.n_pes()}, but torch's "
                               f"default group has rank {rank} of {size}; start both from the same launcher")
        _staging = Staging(opts.timeout.total_seconds() if opts.timeout else 0)
    global _world_groups
    group = ProcessGroupPyshmem(rank, size, pes)
    group._name = opts.group_id
    if not group._world:
        group._slot = agree_slot(opts.store, rank, size, group, "pyshmem backend: new_group")
        group._p2p_id = group._slot
    else:
        _world_groups += 1
        group._p2p_id = -_world_groups
    return group


def register():
    """Registers the ``pyshmem`` backend with torch.distributed (idempotent)."""
    if "PYSHMEM" not in dist.Backend._plugins:
        dist.Backend.register_backend("pyshmem", _create, extended_api=True, devices=["cpu"])


__all__ = ["ProcessGroupPyshmem", "register"]
