"""A corpus of gfx9 kernels for the LDS-race lint, with the shapes that real kernels take.

Each builder returns the assembly text of one kernel as LLVM would print it (a ``.amdgcn_target``,
the code, the ``amdhsa.kernels`` metadata with its workgroup size). They are written by hand, not
compiled: FlyDSL 0.5.0's compile-only path cannot be steered into each of these shapes (a rotated
loop with its exit test at the top, a trip-count-indexed tail, an exec-masked diagonal tile), and
the point is to have every shape on purpose. The code follows what the compiler emits for them
(``s_mul_hi_u32`` by a magic number for ``k mod 3``, ``s_and_saveexec`` regions, ``s_cmp_lg`` loop
exits).

* :func:`attention`: a flash-attention-style K/V loop over a runtime number of key tiles, rotated
  (tile 0 issued before the loop, the exit test at the top, an unconditional back edge), a causal
  bound and a sliding window that skip whole tiles, and the diagonal tile masked per lane.
* :func:`bf16_gemm`: an 8-wave GEMM with a three-stage ring indexed by ``k mod 3`` over a runtime
  trip count, its tail reading stage ``(n - 1) mod 3``; ``hti=True`` gives waves 4-7 one extra
  barrier first, so the two groups run a barrier phase apart (FlyDSL's a16w16 HTI configuration).
* :func:`fp4_prologue`: a GEMM whose prologue seeds its first fragments from a tile right after a
  barrier, then runs a two-stage runtime loop; ``racy=True`` waits one load too few before it.
* :func:`phase_offset_seed`: the smallest latent read, waves a barrier phase apart.
* :func:`runtime_tail`: a tail reading a stage whose index the lint cannot compute, after
  ``vmcnt(0)`` and a barrier (safe by counters alone) or after a bare barrier (racy).
* :func:`pipelined_loop`: an attention-like software pipeline with a single wait per iteration,
  and its racy variant without it.
* :func:`scratch_address`: a read whose address was reloaded from scratch, after ``vmcnt(0)``
  and a barrier (safe).
* :func:`epilogue`: a GEMM epilogue staging its C tile through LDS with DS writes, no DMA load:
  each wave writes its slot, waits ``lgkmcnt(0)``, passes a barrier and reads the next wave's
  slot under a bounds-checked exec mask, then a barrier before the same slots are written again;
  with either barrier left out (a read that races the write it means to see; a write that may
  overtake the read before it).

Every wait that matters is tagged ``; [wait NAME]`` so :func:`mutants` can remove each in turn.
Every wave reads the lane slot of the *next* wave's slice of a tile, so each read depends on
another wave's load, the case barriers exist for.
"""

import re

HEADER = """\t.amdgcn_target "amdgcn-amd-amdhsa--{arch}"
\t.text
\t.globl\t{name}
\t.p2align\t8
\t.type\t{name},@function
{name}:
"""

FOOTER = """\ts_endpgm
.Lfunc_end_{name}:
\t.size\t{name}, .Lfunc_end_{name}-{name}
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name:           {name}
    .reqd_workgroup_size:
      - {threads}
      - 1
      - 1
    .wavefront_size: 64
    .group_segment_fixed_size: 65536
amdhsa.target:   amdgcn-amd-amdhsa--{arch}
...
\t.end_amdgpu_metadata
"""

# Kernel arguments: the buffer resource, the number of K tiles (s16), a window start (s17), the
# query tile (s18) and the query row within it (s19). Every wave: its id (s10), its lane (v3), the
# lane's 16-byte slot (v4), its own 1 KiB slice of a tile (s8) and the next wave's slot (v5).
PROLOGUE = """\ts_load_dwordx4 s[4:7], s[0:1], 0x0
\ts_load_dwordx4 s[16:19], s[0:1], 0x10
\tv_lshrrev_b32_e32 v1, 6, v0
\tv_readfirstlane_b32 s10, v1
\tv_and_b32_e32 v3, 63, v0
\tv_lshlrev_b32_e32 v4, 4, v3
\ts_lshl_b32 s8, s10, 10
\ts_add_u32 s9, s10, 1
\ts_and_b32 s9, s9, {last_wave}
\ts_lshl_b32 s9, s9, 10
\tv_add_u32_e32 v5, s9, v4
\ts_waitcnt lgkmcnt(0)
"""


def assembly(name: str, code: str, threads: int, arch: str = "gfx950") -> str:
    """A whole assembly file around one kernel's code: target, symbol, ``s_endpgm``, metadata."""
    return HEADER.format(name=name, arch=arch) + code + FOOTER.format(name=name, threads=threads, arch=arch)


def _kernel(name: str, body: str, waves: int, arch: str) -> str:
    return assembly(name, PROLOGUE.format(last_wave=waves - 1) + body, waves * 64, arch)


def _tile_part(lds: str, operand: str) -> str:
    """This wave's part of an A or B tile into LDS at ``lds`` past its slice (B 1 MiB past A)."""
    soffset = "s23" if operand == "A" else "s24"
    source = "" if operand == "A" else "\ts_add_u32 s24, s23, 0x100000\n"
    return (
        f"\ts_add_u32 s22, s8, {lds}\n\ts_mov_b32 m0, s22\n"
        f"{source}\tbuffer_load_dwordx4 v4, s[4:7], {soffset} offen lds\n"
    )


# tile 0's K and V into stage 0, before a pipelined loop over tiles (s12: the tile, s23: the source)
FIRST_TILE = "\ts_mov_b32 s12, 0\n\ts_mov_b32 s23, 0\n" + _tile_part("0", "A") + _tile_part("0x2000", "B")

# tile s20's K and V (V 8 KiB past K) into stage s20 & 1 (4 KiB a stage), its source 4 KiB past the last
NEXT_TILE = """\ts_and_b32 s21, s20, 1
\ts_lshl_b32 s21, s21, 12
\ts_add_u32 s22, s21, s8
\ts_mov_b32 m0, s22
\ts_add_u32 s23, s23, 0x1000
\tbuffer_load_dwordx4 v4, s[4:7], s23 offen lds
\ts_add_u32 s22, s22, 0x2000
\ts_mov_b32 m0, s22
\ts_add_u32 s24, s23, 0x100000
\tbuffer_load_dwordx4 v4, s[4:7], s24 offen lds
"""

ATTENTION = (
    FIRST_TILE
    + """.LBB0_1:
\ts_cmp_ge_u32 s12, s16
\ts_cbranch_scc1 .LBB0_6
\ts_add_u32 s20, s12, 1
\ts_cmp_ge_u32 s20, s16
\ts_cbranch_scc1 .LBB0_2
"""
    + NEXT_TILE
    + """\ts_waitcnt vmcnt(2) ; [wait next-tile]
\ts_branch .LBB0_3
.LBB0_2:
\ts_waitcnt vmcnt(0) ; [wait last-tile]
.LBB0_3:
\ts_barrier
\ts_cmp_lt_u32 s12, s17
\ts_cbranch_scc1 .LBB0_5
\ts_cmp_gt_u32 s12, s18
\ts_cbranch_scc1 .LBB0_5
\ts_and_b32 s25, s12, 1
\ts_lshl_b32 s25, s25, 12
\tv_add_u32_e32 v6, s25, v5
\tds_read_b128 v[8:11], v6
\tv_add_u32_e32 v7, 0x2000, v6
\ts_cmp_eq_u32 s12, s18
\ts_cbranch_scc0 .LBB0_4
\tv_cmp_ge_u32_e64 s[26:27], s19, v3
\ts_and_saveexec_b64 s[28:29], s[26:27]
\ts_cbranch_execz .LBB0_7
\tds_read_b128 v[12:15], v7
.LBB0_7:
\ts_or_b64 exec, exec, s[28:29]
\ts_branch .LBB0_8
.LBB0_4:
\tds_read_b128 v[12:15], v7
.LBB0_8:
\ts_waitcnt lgkmcnt(0) ; [wait reads-done]
.LBB0_5:
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_branch .LBB0_1
.LBB0_6:
"""
)


def attention(arch: str = "gfx950") -> str:
    """Causal, sliding-window attention over a runtime number of K/V tiles (4 waves, clean)."""
    return _kernel("attention_causal_window", ATTENTION, 4, arch)


def _mod3(dest: str, src: str, scratch: str) -> str:
    """``dest = src mod 3`` the way LLVM writes it for a 32-bit unsigned value."""
    return (
        f"\ts_mul_hi_u32 {scratch}, {src}, 0xaaaaaaab\n\ts_lshr_b32 {scratch}, {scratch}, 1\n"
        f"\ts_mul_i32 {scratch}, {scratch}, 3\n\ts_sub_u32 {dest}, {src}, {scratch}\n"
    )


_GROUP_OF = """\tv_lshrrev_b32_e32 v7, 8, v0
\tv_cmp_eq_u32_e32 vcc, {group}, v7
\ts_and_b64 s[30:31], vcc, exec
\ts_cbranch_scc0 {skip}
\ts_barrier
{skip}:
"""


def bf16_gemm(hti: bool = False, arch: str = "gfx950", loop_wait: int = 1) -> str:
    """An 8-wave GEMM with a three-stage ring over ``n`` K tiles (``n`` a kernel argument, >= 1).

    Main-loop step ``k`` (``k`` < ``n - 1``) reads tile ``k`` from stage ``k mod 3`` and issues
    tile ``k + 2`` into stage ``(k + 2) mod 3``, the one tile ``k - 1`` left; the tail reads
    tile ``n - 1`` from stage ``(n - 1) mod 3``. With ``hti`` waves 4-7 pass one extra barrier
    after the prologue's and waves 0-3 one at the end.
    """
    body = (
        (
            "\ts_add_i32 s15, s16, -1\n\ts_mov_b32 s23, 0\n"
            + _tile_part("0", "A")
            + "\ts_add_u32 s23, s23, 0x2000\n"
            + _tile_part("0x2000", "A")
        )
        + """\ts_waitcnt vmcnt(1) ; [wait prologue]
\ts_barrier
"""
    )
    if hti:
        body += _GROUP_OF.format(group=1, skip=".LBB1_0")
    body += """\ts_mov_b32 s12, 0
\ts_cmp_eq_u32 s15, 0
\ts_cbranch_scc1 .LBB1_2
.LBB1_1:
"""
    body += f"\ts_waitcnt vmcnt({loop_wait}) lgkmcnt(0) ; [wait loop]\n"
    body += (
        "\ts_barrier\n"
        + _mod3("s20", "s12", "s21")
        + """\ts_lshl_b32 s21, s20, 13
\tv_add_u32_e32 v6, s21, v5
\tds_read_b128 v[8:11], v6
\ts_add_u32 s20, s12, 2
"""
        + _mod3("s21", "s20", "s22")
        + """\ts_lshl_b32 s21, s21, 13
\ts_add_u32 s22, s21, s8
\ts_mov_b32 m0, s22
\ts_add_u32 s23, s23, 0x2000
\tbuffer_load_dwordx4 v4, s[4:7], s23 offen lds
\ts_add_u32 s12, s12, 1
\ts_cmp_lg_u32 s12, s15
\ts_cbranch_scc1 .LBB1_1
.LBB1_2:
\ts_waitcnt vmcnt(0) lgkmcnt(0) ; [wait tail]
\ts_barrier
"""
        + _mod3("s20", "s15", "s21")
        + """\ts_lshl_b32 s21, s20, 13
\tv_add_u32_e32 v6, s21, v5
\tds_read_b128 v[8:11], v6
\ts_waitcnt lgkmcnt(0)
"""
    )
    if hti:
        body += _GROUP_OF.format(group=0, skip=".LBB1_3")
    return _kernel("bf16_gemm_hti" if hti else "bf16_gemm", body, 8, arch)


def fp4_prologue(racy: bool = False, arch: str = "gfx950") -> str:
    """A 4-wave GEMM whose prologue seeds fragments from tile 0's B right after a barrier.

    Issue order: A0, four scale loads, B0, A1, B1. ``vmcnt(2)`` retires everything up to B0;
    the racy prologue waits ``vmcnt(3)`` (B0 still in flight) and reads B0 after a bare barrier.
    Then a two-stage runtime loop over the remaining tiles.
    """
    seed_wait = 3 if racy else 2
    body = (
        """\ts_mov_b32 s23, 0
\ts_mov_b32 m0, s8
\tbuffer_load_dwordx4 v4, s[4:7], s23 offen lds
\tbuffer_load_dword v20, v4, s[4:7], 0 offen offset:16
\tbuffer_load_dword v21, v4, s[4:7], 0 offen offset:32
\tbuffer_load_dword v22, v4, s[4:7], 0 offen offset:48
\tbuffer_load_dword v23, v4, s[4:7], 0 offen offset:64
"""
        + _tile_part("0x1000", "B")
        + "\ts_add_u32 s23, s23, 0x1000\n"
    )
    body += _tile_part("0x2000", "A") + _tile_part("0x3000", "B")
    body += f"\ts_waitcnt vmcnt({seed_wait}) ; [wait seed]\n"
    body += """\ts_barrier
\tv_add_u32_e32 v6, 0x1000, v5
\tds_read_b128 v[16:19], v6
\ts_mov_b32 s12, 0
\ts_cmp_eq_u32 s16, 0
\ts_cbranch_scc1 .LBB2_2
.LBB2_1:
\ts_waitcnt vmcnt(2) ; [wait loop]
\ts_barrier
\ts_and_b32 s20, s12, 1
\ts_lshl_b32 s20, s20, 13
\tv_add_u32_e32 v6, s20, v5
\tds_read_b128 v[8:11], v6
\tv_add_u32_e32 v7, 0x1000, v6
\tds_read_b128 v[12:15], v7
\ts_waitcnt lgkmcnt(0) ; [wait reads-done]
\ts_barrier
\ts_add_u32 s22, s20, s8
\ts_mov_b32 m0, s22
\ts_add_u32 s23, s23, 0x1000
\tbuffer_load_dwordx4 v4, s[4:7], s23 offen lds
\ts_add_u32 s22, s22, 0x1000
\ts_mov_b32 m0, s22
\ts_add_u32 s24, s23, 0x100000
\tbuffer_load_dwordx4 v4, s[4:7], s24 offen lds
\ts_add_u32 s12, s12, 1
\ts_cmp_lg_u32 s12, s16
\ts_cbranch_scc1 .LBB2_1
.LBB2_2:
\ts_waitcnt vmcnt(0)
"""
    return _kernel("fp4_prologue_racy" if racy else "fp4_prologue", body, 4, arch)


def phase_offset_seed(arch: str = "gfx950") -> str:
    """Four waves load a tile, rendezvous, and waves 2-3 pass one more barrier before their wait:
    wave 1's read of wave 2's part is then ordered only by the time wave 2 takes to wait (latent)."""
    body = (
        _tile_part("0", "A")
        + """\ts_barrier
\ts_cmp_lt_u32 s10, 2
\ts_cbranch_scc1 .LBB3_0
\ts_barrier
.LBB3_0:
\ts_waitcnt vmcnt(0) ; [wait seed]
\ts_barrier
\tds_read_b128 v[8:11], v5
"""
    )
    return _kernel("phase_offset_seed", body, 4, arch)


def runtime_tail(racy: bool = False, arch: str = "gfx950") -> str:
    """A two-stage ring whose tail reads a stage the lint cannot compute: its index is a kernel
    argument (``s19 & 1``), as when the compiler derives it from a trip count it divided at run
    time. Both stages are loaded; the fixed tail waits ``vmcnt(0)`` before its barrier, so every
    wave's loads have retired whatever stage it reads. The racy tail passes a bare barrier."""
    body = "\ts_mov_b32 s23, 0\n" + _tile_part("0", "A") + "\ts_add_u32 s23, s23, 0x1000\n" + _tile_part("0x1000", "A")
    if not racy:
        body += "\ts_waitcnt vmcnt(0) ; [wait tail]\n"
    body += """\ts_barrier
\ts_and_b32 s25, s19, 1
\ts_lshl_b32 s25, s25, 12
\tv_add_u32_e32 v6, s25, v5
\tds_read_b128 v[8:11], v6
\ts_waitcnt lgkmcnt(0)
"""
    return _kernel("runtime_tail_racy" if racy else "runtime_tail", body, 4, arch)


def selected_tail(racy: bool = False, arch: str = "gfx950") -> str:
    """A two-stage ring's tail whose stage base is selected on a kernel argument's parity, as LLVM
    writes it in MLA decode: ``s_bitcmp0``, a mask by ``s_cselect_b64``, ``s_and_b64`` of it with
    exec, and ``s_cselect_b32`` of the two bases. Stage 0 is loaded first, stage 1 second; the
    fixed tail waits ``vmcnt(0)`` before its barrier, the racy one ``vmcnt(1)``: stage 1 is still
    in flight, and the waves that select it read it too early."""
    body = "\ts_mov_b32 s23, 0\n" + _tile_part("0", "A") + "\ts_add_u32 s23, s23, 0x1000\n" + _tile_part("0x1000", "A")
    body += (
        f"\ts_waitcnt vmcnt({1 if racy else 0}) ; [wait tail]\n"
        + """\ts_barrier
\ts_bitcmp0_b32 s19, 0
\ts_cselect_b64 s[26:27], -1, 0
\ts_and_b64 s[28:29], s[26:27], exec
\ts_cselect_b32 s25, 0, 0x1000
\tv_add_u32_e32 v6, s25, v5
\tds_read_b128 v[8:11], v6
\ts_waitcnt lgkmcnt(0)
"""
    )
    return _kernel("selected_tail_racy" if racy else "selected_tail", body, 4, arch)


def pipelined_loop(racy: bool = False, arch: str = "gfx950") -> str:
    """An attention-like software pipeline over a runtime number of K/V tiles (``s16``, at least
    1) with one wait per iteration: tile 0 is issued before the loop, each iteration issues tile
    ``k + 1`` into the other stage (one past the end too, as pipelines that clamp their source
    do), waits ``vmcnt(2)`` (all but that tile's two loads), passes a barrier, reads tile ``k``'s
    K and V from stage ``k & 1`` and retires its reads before the barrier that ends the
    iteration. ``racy`` leaves the one wait out."""
    body = FIRST_TILE + ".LBB5_1:\n\ts_add_u32 s20, s12, 1\n" + NEXT_TILE
    if not racy:
        body += "\ts_waitcnt vmcnt(2) ; [wait loop]\n"
    body += """\ts_barrier
\ts_and_b32 s25, s12, 1
\ts_lshl_b32 s25, s25, 12
\tv_add_u32_e32 v6, s25, v5
\tds_read_b128 v[8:11], v6
\tv_add_u32_e32 v7, 0x2000, v6
\tds_read_b128 v[12:15], v7
\ts_waitcnt lgkmcnt(0) ; [wait reads-done]
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_cmp_lt_u32 s12, s16
\ts_cbranch_scc1 .LBB5_1
\ts_waitcnt vmcnt(0)
"""
    return _kernel("pipelined_loop_racy" if racy else "pipelined_loop", body, 4, arch)


def scratch_address(arch: str = "gfx950") -> str:
    """A read whose address register was spilled to scratch and reloaded (register pressure, as in
    FlyDSL's fp8 GEMM at K=512): the reloaded value is data to the lint, but the wait before the
    barrier retires the tile's loads in every wave (and the reload), so the read is safe whatever
    its address."""
    body = (
        """\tscratch_store_dword off, v5, off offset:16
\tv_mov_b32_e32 v5, 0
"""
        + _tile_part("0", "A")
        + """\tscratch_load_dword v6, off, off offset:16
\ts_waitcnt vmcnt(0) ; [wait reload]
\ts_barrier
\tds_read_b128 v[8:11], v6
\ts_waitcnt lgkmcnt(0)
"""
    )
    return _kernel("scratch_address", body, 4, arch)


def epilogue(drop: str | None = None, arch: str = "gfx950") -> str:
    """A C tile staged through LDS for the store, in two halves through the same 1 KiB slots
    (16 KiB past the tiles): each wave writes its lane slot with ``ds_write``, waits
    ``lgkmcnt(0)``, passes the *publish* barrier and reads the next wave's slot in the lanes
    inside the tile (row and column bounds, kernel arguments, and-ed into one exec mask, the
    address computed under it, as LLVM emits a guarded store); the *reuse* barrier comes before
    the second half overwrites the slots. ``drop`` leaves one barrier out: ``"publish"`` (the
    reads race the writes they mean to see: errors) or ``"reuse"`` (the second half's writes
    may overtake the first half's reads of another wave: warnings)."""
    publish = "" if drop == "publish" else "\ts_barrier\n"
    reuse = "" if drop == "reuse" else "\ts_barrier\n"
    body = (
        """\ts_add_u32 s22, s8, 0x4000
\tv_add_u32_e32 v6, s22, v4
\tds_write_b128 v6, v[8:11]
\ts_waitcnt lgkmcnt(0) ; [wait publish]
"""
        + publish
        + """\tv_cmp_gt_u32_e32 vcc, s16, v3
\tv_cmp_gt_u32_e64 s[26:27], s17, v3
\ts_and_b64 s[28:29], vcc, s[26:27]
\ts_and_saveexec_b64 s[30:31], s[28:29]
\ts_cbranch_execz .LBB7_1
\tv_add_u32_e32 v7, 0x4000, v5
\tds_read_b128 v[12:15], v7
\ts_waitcnt lgkmcnt(0)
.LBB7_1:
\ts_or_b64 exec, exec, s[30:31]
"""
        + reuse
        + """\tds_write_b128 v6, v[16:19]
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\tv_add_u32_e32 v7, 0x4000, v5
\tds_read_b128 v[20:23], v7
\ts_waitcnt lgkmcnt(0)
"""
    )
    return _kernel(f"epilogue_no_{drop}_barrier" if drop else "epilogue", body, 4, arch)


_TAG = re.compile(r";\s*\[wait ([\w-]+)\]")


def mutants(text: str) -> dict[str, str]:
    """The kernel with one tagged wait removed, for each tagged wait: {tag: text}."""
    lines = text.splitlines(keepends=True)
    out = {}
    for i, line in enumerate(lines):
        tag = _TAG.search(line)
        if tag:
            out[tag.group(1)] = "".join(lines[:i] + lines[i + 1 :])
    return out


def corpus(arch: str = "gfx950") -> dict[str, str]:
    """Every kernel of the corpus by name: the clean ones and those with a known finding."""
    return {
        "attention_causal_window": attention(arch),
        "bf16_gemm": bf16_gemm(arch=arch),
        "bf16_gemm_hti": bf16_gemm(hti=True, arch=arch),
        "fp4_prologue": fp4_prologue(arch=arch),
        "fp4_prologue_racy": fp4_prologue(racy=True, arch=arch),
        "phase_offset_seed": phase_offset_seed(arch),
        "runtime_tail": runtime_tail(arch=arch),
        "runtime_tail_racy": runtime_tail(racy=True, arch=arch),
        "selected_tail": selected_tail(arch=arch),
        "selected_tail_racy": selected_tail(racy=True, arch=arch),
        "pipelined_loop": pipelined_loop(arch=arch),
        "pipelined_loop_racy": pipelined_loop(racy=True, arch=arch),
        "scratch_address": scratch_address(arch),
        "epilogue": epilogue(arch=arch),
        "epilogue_no_publish_barrier": epilogue("publish", arch),
        "epilogue_no_reuse_barrier": epilogue("reuse", arch),
    }
