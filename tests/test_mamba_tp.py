"""Tensor parallelism of the Mamba-2 mixer, as Megatron-LM's ``MambaMixer`` shards it
(megatron/core/ssm/mamba_mixer.py, NVIDIA/Megatron-LM commit d98e8a64ddf34856e74b24714e3bedb2f5a39553):
in_proj column-parallel (z, x, B, C and Δ each split by heads or groups), the conv1d, dt_bias, A_log,
D and the gated norm's weight the rank's own slices, out_proj row-parallel; one all-reduce of
out_proj's output in forward and one of in_proj's input gradient in backward.

Oracle: hand arithmetic on a small Mamba-2 (d = 64, d_inner = 128, H = 8 heads of 16, G = 4 groups,
N = 16, conv kernel 4, L = 2, V = 1024, B = 1, T = 32, fp32: 4 bytes), each count written out from
the module shapes Megatron-LM allocates per rank (``in_proj_partition_sizes``, ``conv_dim``,
``nheads_local_tp``, ``d_inner_local_tp``), at tp = 1, 2 and 4.
"""

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.derive.memory_activations import saved_list
from symgpt.derive.steptime import Cluster, Priced
from symgpt.sweep.plan_space import strategies

D, DI, H, G, N, K, L, V, BN, TN = 64, 128, 8, 4, 16, 4, 2, 1024, 1, 32
BYTES = 4  # the default precision: fp32


def _small(**over):
    sizes = dict(d=D, d_inner=DI, h_ssm=H, G_ssm=G, d_state=N, d_conv=K, V=V, L=L, Q_chunk=16, B=BN, T=TN)
    return symgpt.load("mamba2-2.7b", **{**sizes, **over})


def _parts(m, name, **options):
    return {p: m.value(e) for p, e in m.quantity(name, **options).breakdown}


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_weights_per_device_split_as_megatron_allocates_them(tp):
    w = _parts(_small(), "memory.weights", tp=tp)
    local_inner, local_groups, local_heads = DI // tp, G // tp, H // tp
    in_rows = 2 * local_inner + 2 * local_groups * N + local_heads      # z, x, B, C, Δ of this rank
    conv_dim = local_inner + 2 * local_groups * N                        # x, B, C of this rank
    mixer = "backbone/layers/mixer/"
    assert w[mixer + "in_proj"] == D * in_rows * L * BYTES
    assert w[mixer + "conv1d"] == (conv_dim * K + conv_dim) * L * BYTES   # weight [conv_dim, 1, K] and bias
    assert w[mixer + "scan"] == 3 * local_heads * L * BYTES               # dt_bias, A_log, D
    assert w[mixer + "norm"] == local_inner * L * BYTES                   # the gated RMSNorm's weight
    assert w[mixer + "out_proj"] == local_inner * D * L * BYTES
    assert w["backbone/layers/norm"] == D * L * BYTES                     # the pre-mixer norm: whole
    assert w["backbone/embeddings"] == V // tp * D * BYTES                # vocabulary-parallel (tied head)
    assert w["backbone/norm_f"] == D * BYTES


@pytest.mark.parametrize("tp", [2, 4])
def test_communication_one_all_reduce_each_way_per_mixer(tp):
    c = _parts(_small(), "comm.tp", tp=tp)
    all_reduce = 2 * (tp - 1) * BN * TN * D * BYTES // tp  # a ring all-reduce of one (B, T, d) tensor
    assert c["tp/backbone/layers/mixer/out_proj all-reduce (forward)"] == L * all_reduce
    assert c["tp/backbone/layers/norm all-reduce (backward)"] == L * all_reduce      # in_proj's input gradient
    assert not [p for p in c if "mixer/norm" in p or "conv1d" in p or "scan" in p]  # nothing inside the mixer
    assert _parts(_small(), "comm.tp", tp=1) == {"none": 0}


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_flops_per_device_divide_by_tp(tp):
    f = {p: _small().value(e) for p, e in Priced(_small(), Cluster.from_options(tp=tp, peak=10**15)).device_flops()}
    proj = 2 * DI + 2 * G * N + H  # in_proj's outputs: z, x, B, C, Δ
    # forward 2 FLOPs per multiply-add, backward twice that: 6 per multiply-add per token
    assert f["backbone/layers/mixer/in_proj"] == 6 * BN * TN * D * proj * L // tp
    assert f["backbone/layers/mixer/out_proj"] == 6 * BN * TN * DI * D * L // tp


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_saved_tensors_inside_the_mixer_split_its_input_whole(tp):
    m = _small()
    got = {(e[0], e[1]): m.value(e[3] * e[4] * sympy.prod(e[2]) / e[5]) * tp for e in saved_list(m, tp=tp)}
    mixer = "backbone/layers/mixer/"
    whole = BN * TN * D * BYTES * L * tp  # every entry is compared times tp (exact integers)
    assert got[(mixer + "in_proj", "input")] == whole                                  # replicated input
    assert got[(mixer + "conv1d", "input")] == BN * TN * (DI + 2 * G * N) * BYTES * L
    assert got[(mixer + "scan", "delta")] == BN * TN * H * BYTES * L
    assert got[(mixer + "scan", "B")] == BN * TN * G * N * BYTES * L
    assert got[(mixer + "scan", "chunk_states")] == BN * (TN // 16 + 1) * H * (DI // H) * N * BYTES * L
    assert got[(mixer + "norm", "rstd")] == BN * TN * G * BYTES * L                      # fp32, per group
    assert got[(mixer + "out_proj", "input")] == BN * TN * DI * BYTES * L
    assert got[("backbone/layers/norm", "input")] == whole                               # outside the mixer


def test_nemotron_h_mixer_priced_as_an_mlp():
    m = symgpt.load("nemotron-h-8b", B=1, T=4096)
    c = _parts(m, "comm.tp", tp=4)
    # 24 Mamba-2 layers and 24 MLP layers: the same all-reduce of a (B, T, d) tensor per layer
    assert c["tp/mamba_layers/mixer/out_proj all-reduce (forward)"] == c["tp/mlp_layers/mlp/down all-reduce (forward)"]
    assert c["tp/mamba_layers/mamba_norm all-reduce (backward)"] == c["tp/mlp_layers/mlp_norm all-reduce (backward)"]
    assert c["tp/mamba_layers/mixer/out_proj all-reduce (forward)"] == 24 * 2 * 3 * 4096 * 4096 * BYTES // 4


@pytest.mark.parametrize("name", ["mamba-2.8b", "jamba-1.5-mini"])
def test_mamba1_refused_in_one_line(name):
    m = symgpt.load(name, B=1, T=64)
    with pytest.raises(SymgptError, match="Mamba-1 mixer is not modelled") as e:
        m.quantity("memory.total", tp=2)
    assert "\n" not in str(e.value)
    assert m.value(m.quantity("memory.weights", tp=1).expr) > 0  # tp = 1 answers


def test_groups_and_heads_must_divide():
    with pytest.raises(SymgptError, match=r"tp=2 must divide the Mamba-2 groups G_ssm=1"):
        symgpt.load("mamba2-2.7b", B=1, T=64).quantity("comm.total", tp=2)
    with pytest.raises(SymgptError, match=r"tp=4 must divide the Mamba-2 heads h_ssm=6"):
        _small(h_ssm=6, d_inner=96, G_ssm=2).quantity("memory.total", tp=4)
    with pytest.raises(SymgptError, match=r"tp=8 must divide the Mamba-2 groups G_ssm=4"):
        _small().quantity("memory.total", tp=8)


def test_plan_keeps_only_tensor_parallel_degrees_megatron_accepts():
    tps = set(strategies(_small(), 8, 8, (1,), (1,), 1)["tp"].tolist())
    assert tps == {1, 2, 4}  # G = 4: tp = 8 refused
    assert set(strategies(symgpt.load("mamba2-2.7b", B=1, T=64), 8, 8, (1,), (1,), 1)["tp"].tolist()) == {1}
    assert set(strategies(symgpt.load("mamba-2.8b", B=1, T=64), 8, 8, (1,), (1,), 1)["tp"].tolist()) == {1}


@pytest.mark.parametrize("name, kind", [("qwen3-next-80b-a3b", "causal_conv1d"), ("lfm2-1.2b", "causal_conv1d"),
                                        ("kimi-linear-48b-a3b", "causal_conv1d")])
def test_other_recurrent_layers_refuse_tensor_parallelism(name, kind):
    """A gated delta rule, Kimi delta attention or a short convolution is not sharded as Megatron-LM
    shards a Mamba-2 mixer (their convolutions and per-head parameters would stay whole, and a norm
    before the output projection would take the wrong collective): refused, not priced."""
    m = symgpt.load(name, B=1, T=64)
    for q in ("memory.total", "comm.total"):
        with pytest.raises(SymgptError, match=f"tensor parallelism of {kind} layers is not modelled") as e:
            m.quantity(q, tp=2)
        assert "\n" not in str(e.value)
    assert m.value(m.quantity("memory.weights", tp=1).expr) > 0
