"""Mamba (Gu & Dao 2023), Falcon-Mamba (TII 2024) and Mamba-2 (Dao & Gu 2024) language models:
attention-free stacks of state-space mixers (``blocks/mamba.py`` builds them; the scans are the
ops of ``symgpt.ops.ssm``). Read from transformers' MambaConfig, FalconMambaConfig and
Mamba2Config.

Counting convention of the scans (stated on every answer's op descriptions): the arithmetic of
transformers' PyTorch path -- Mamba's sequential scan (one C·h contraction per step and channel),
Mamba-2's chunked SSD scan (the sequence padded to whole chunks of ``chunk_size``) -- as
FlopCounterMode counts it. At inference these models keep no KV cache: their state (conv state +
SSM state, constant in T) is ``inference.state`` (``derive.recurrent``), and a decode step is one
state update (the ops' ``decode`` rules).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {"version": 1, "tied": True, "proj_bias": False, "conv_bias": True, "bcdt_norm": False, "activation": "silu",
         "loss": True}
CHOICES = {"activation": ("silu",)}
FLAG_HELP = {
    "version": "1: Mamba's selective scan (MambaMixer); 2: Mamba-2's chunked SSD scan (Mamba2Mixer)",
    "tied": "the LM head is the token embedding (tie_word_embeddings)",
    "proj_bias": "in_proj and out_proj have biases (use_bias)",
    "conv_bias": "the causal conv1d has a bias (use_conv_bias)",
    "bcdt_norm": "parameter-free RMSNorms of Δ, B and C before the scan (Falcon-Mamba)",
    "activation": "the activation after the conv1d (hidden_act; the gate is always silu)",
    "loss": "the cross-entropy loss of training",
}
_MAMBA1 = ("V", "d", "L", "d_inner", "d_state", "d_conv", "r_dt")
_MAMBA2 = ("V", "d", "L", "d_inner", "d_state", "d_conv", "h_ssm", "G_ssm", "Q_chunk")
_BUILD = Ref("symgpt.families.blocks.mamba", "build")

FAMILIES = (
    Family(name="mamba", description="Mamba / Falcon-Mamba: RMSNorm pre-norm blocks of a selective-scan mixer "
                                     "(in/x/dt/out projections, causal conv1d, A, D), no attention",
           flags=FLAGS, sizes=_MAMBA1, build=partial(_BUILD, name="mamba"), flag_help=FLAG_HELP, choices=CHOICES),
    Family(name="mamba2", description="Mamba-2: RMSNorm pre-norm blocks of a chunked SSD mixer (heads, groups, "
                                      "state size, chunk length), no attention",
           flags={**FLAGS, "version": 2, "tied": False}, sizes=_MAMBA2, build=partial(_BUILD, name="mamba2"),
           flag_help=FLAG_HELP, choices=CHOICES),
)


def _common(f: Fields, tied: bool):
    if f.str("hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_act {f.cfg['hidden_act']!r} is not modelled for a Mamba mixer "
                          "(transformers' kernels path supports silu)")
    d = f.int("hidden_size", 768 if tied else 4096)
    expand = f.int("expand", 2)
    sizes = {"d": d, "L": f.int("num_hidden_layers", 32 if tied else 64), "d_inner": expand * d,
             "d_state": f.int("state_size", 16 if tied else 128), "d_conv": f.int("conv_kernel", 4)}
    flags = {"tied": f.bool("tie_word_embeddings", tied), "proj_bias": f.bool("use_bias", False), "activation": "silu",
             "conv_bias": f.bool("use_conv_bias", True)}
    # initialisation, numerics and the choice of the (numerically identical) torch scan: no count
    f.silent("time_step_scale", "time_step_min", "time_step_max", "time_step_init_scheme", "time_step_floor",
             "rescale_prenorm_residual", "residual_in_fp32", "use_mambapy", "use_associative_scan",
             "use_falcon_mambapy", "mixer_rms_eps", "time_step_limit")
    return flags, sizes


def _rank(f: Fields, d: int) -> int:
    value, _ = f.get("time_step_rank", "auto")
    if value == "auto":
        return -(-d // 16)  # transformers: math.ceil(hidden_size / 16)
    return f.int("time_step_rank")


def _mamba1(f: Fields, falcon: bool):
    flags, sizes = _common(f, tied=True)
    sizes["V"] = f.int("vocab_size", 50280)
    sizes["r_dt"] = _rank(f, sizes["d"])
    # MambaConfig/FalconMambaConfig.__post_init__ set intermediate_size = expand * hidden_size, but an
    # intermediate_size the file gives is kept (the mixer's width): Falcon-Mamba-7B's config.json has
    # expand 16 with intermediate_size 8,192 (twice hidden_size), and the checkpoint holds that width
    if "intermediate_size" in f.cfg:
        sizes["d_inner"] = f.int("intermediate_size")
    flags["bcdt_norm"] = falcon
    return "mamba", flags, sizes


def read_mamba(f: Fields):
    """transformers' MambaConfig."""
    return _mamba1(f, falcon=False)


def read_falcon_mamba(f: Fields):
    """transformers' FalconMambaConfig: MambaConfig's fields and ``mixer_rms_eps`` (the
    parameter-free norms of Δ, B and C)."""
    return _mamba1(f, falcon=True)


def read_mamba2(f: Fields):
    """transformers' Mamba2Config (``time_step_rank`` is read by the config but no Mamba2 module
    uses it)."""
    flags, sizes = _common(f, tied=False)
    sizes["V"] = f.int("vocab_size", 32768)
    heads, head_dim = f.int("num_heads", 128), f.int("head_dim", 64)
    if heads * head_dim != sizes["d_inner"]:
        raise SymgptError(f"{f.where}: hidden_size * expand ({sizes['d_inner']}) must equal num_heads * head_dim "
                          f"({heads * head_dim}) (Mamba2Config's check)")
    groups = f.int("n_groups", 8)
    if heads % groups:
        raise SymgptError(f"{f.where}: num_heads {heads} is not a multiple of n_groups {groups}")
    sizes.update(h_ssm=heads, G_ssm=groups, Q_chunk=f.int("chunk_size", 256))
    f.silent("time_step_rank")
    return "mamba2", flags, sizes


READERS = {
    "mamba": Reader(read_mamba, ("MambaForCausalLM",)),
    "falcon_mamba": Reader(read_falcon_mamba, ("FalconMambaForCausalLM",)),
    "mamba2": Reader(read_mamba2, ("Mamba2ForCausalLM",)),
}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("mamba-130m", "mamba",
           {"d": 768, "L": 24, "d_inner": 1536, "d_state": 16, "d_conv": 4, "V": 50280, "r_dt": 48},
           source="Gu & Dao 2023 (Mamba); state-spaces/mamba-130m-hf " + _HF,
           note="129,135,360 parameters; published: 130M. The output head is the embedding matrix "
                "(tied), counted once; the vocabulary is padded to 50,280"),
    Preset("mamba-370m", "mamba",
           {"d": 1024, "L": 48, "d_inner": 2048, "d_state": 16, "d_conv": 4, "V": 50280, "r_dt": 64},
           source="Gu & Dao 2023 (Mamba), the 370M row (48 layers, d 1,024); state-spaces/mamba-370m-hf",
           note="371,516,416 parameters; published: 370M. The output head is the embedding matrix "
                "(tied), counted once; the vocabulary is padded to 50,280"),
    Preset("mamba-1.4b", "mamba",
           {"d": 2048, "L": 48, "d_inner": 4096, "d_state": 16, "d_conv": 4, "V": 50280, "r_dt": 128},
           source="Gu & Dao 2023 (Mamba), the 1.4B row (48 layers, d 2,048); state-spaces/mamba-1.4b-hf",
           note="1,372,178,432 parameters; published: 1.4B. The output head is the embedding matrix "
                "(tied), counted once; the vocabulary is padded to 50,280"),
    Preset("mamba-2.8b", "mamba",
           {"d": 2560, "L": 64, "d_inner": 5120, "d_state": 16, "d_conv": 4, "V": 50280, "r_dt": 160},
           source="Gu & Dao 2023 (Mamba); state-spaces/mamba-2.8b-hf " + _HF,
           note="2,768,345,600 parameters; published: 2.8B. The output head is the embedding matrix "
                "(tied), counted once; the vocabulary is padded to 50,280"),
    Preset("falcon-mamba-7b", "mamba",
           {"d": 4096, "L": 64, "d_inner": 8192, "d_state": 16, "d_conv": 4, "V": 65024, "r_dt": 256},
           flags={"tied": False, "bcdt_norm": True},
           source="Zuo et al. 2024 (Falcon Mamba); tiiuae/falcon-mamba-7b " + _HF,
           note="7,272,665,088 parameters; published: 7B. The mixer's width is intermediate_size 8,192 (the "
                "config's expand 16 is not used when intermediate_size is given); parameter-free RMSNorms of "
                "B, C and dt; untied output head"),
    # Mamba 790M and Mamba-2 2.7B (assembled shape fields, settled by the checkpoints' counts)
    Preset("mamba-790m", "mamba",
           {"d": 1536, "L": 48, "d_inner": 3072, "d_state": 16, "d_conv": 4, "V": 50280, "r_dt": 96},
           source="Gu & Dao 2023 (Mamba), the 790M row (48 layers, d 1,536); state-spaces/mamba-790m-hf",
           note="793,204,224 parameters; published: 790M. The output head is the embedding matrix "
                "(tied), counted once; the vocabulary is padded to 50,280"),
    Preset("mamba2-2.7b", "mamba2",
           {"d": 2560, "L": 64, "d_inner": 5120, "d_state": 128, "d_conv": 4, "V": 50288, "h_ssm": 80, "G_ssm": 1,
            "Q_chunk": 256},
           flags={"tied": True},
           source="Dao & Gu 2024 (Transformers are SSMs); state-spaces/mamba2-2.7b (mamba_ssm's format: d_model "
                  "2,560, 64 layers, vocabulary 50,277 padded to a multiple of 16, Mamba2 defaults)",
           note="2,702,599,680 parameters; published: 2.7B. 80 heads of 64, one group, state 128, chunks of 256; "
                "the output head is the embedding matrix (tied), counted once"),
)
