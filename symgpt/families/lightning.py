"""Lightning-attention hybrids: MiniMax-Text-01 (MiniMax 2025, "MiniMax-01: Scaling Foundation
Models with Lightning Attention"; transformers' ``MiniMaxForCausalLM``): linear-attention layers
(lightning attention, ``blocks/lightning.py``) among softmax-attention layers (Mixtral's: GQA,
RoPE), as ``layer_types`` lists them, each layer's FFN a mixture of SwiGLU experts (a softmax
router, its top-k renormalised).

The layer pattern is data: ``linear_layers`` lightning layers and L - linear_layers attention
layers, two stacks; the order of the layers changes no count. The lightning layers are counted by
the blocked algorithm of transformers' PyTorch path (``ops.LightningAttention``: blocks of
``block_size``). MiniMax's residual is the normed input (``norm_residual``): x ← norm(x) + branch.
At inference the state of a lightning layer (``inference.state``, d_h x d_h per head at the
model's dtype) is not a KV cache: the KV cache holds the attention layers' keys and values.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from .base import Extended, Family, Preset
from .decoders import BUILD, CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, llama_like

#: the flags these families add to the generic decoder's (read by ``blocks/stacks.py``,
#: ``blocks/decoder.py``, ``blocks/decoder_layers.py`` and ``blocks/lightning.py``)
ADDED = {"mixer": "attention", "linear_mixer": "lightning", "linear_layers": 16, "full_layers": None,
         "lightning_block": 256, "norm_residual": True}
ADDED_HELP = {
    "mixer": "attention or lightning: the token mixer of the layers of a stack",
    "linear_mixer": "the mixer of the linear-attention layers (lightning: lightning attention)",
    "linear_layers": "how many of the L layers are linear-attention layers (the others attention layers)",
    "full_layers": "unused here (no sliding-window layers)",
    "lightning_block": "lightning attention: the block length of the blocked algorithm (block_size)",
    "norm_residual": "the residual of each branch is the normed input (MiniMax), not the layer's input",
}
_CHOICES = {"mixer": ("attention", "lightning"), "linear_mixer": ("lightning",)}


def _family(name: str, description: str, **changes) -> Family:
    added = {**ADDED, **{k: v for k, v in changes.items() if k in ADDED}}
    changes = {k: v for k, v in changes.items() if k not in ADDED}
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, added), sizes=SIZES,
                  optional=OPTIONAL, build=partial(BUILD, name=name), flag_help=Extended(FLAG_HELP, added=ADDED_HELP),
                  choices=Extended(CHOICES, added=_CHOICES))


FAMILIES = (
    _family("minimax", "MiniMax-Text-01: lightning-attention layers among softmax-attention layers (GQA, RoPE), "
            "a mixture of SwiGLU experts in every layer, residuals from the normed input",
            gqa=True, moe=True),
)

_FACTORS = ("full_attn_alpha_factor", "full_attn_beta_factor", "linear_attn_alpha_factor",
            "linear_attn_beta_factor", "mlp_alpha_factor", "mlp_beta_factor")


def _pattern(f: Fields, L: int, default: list[str]) -> int:
    """How many layers ``layer_types`` makes linear-attention layers (*default* when it has none)."""
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None:
        types = default
    if not isinstance(types, list) or not all(t in ("linear_attention", "full_attention") for t in types):
        raise SymgptError(f"{f.where}: field 'layer_types' must list 'linear_attention' / 'full_attention' per layer")
    if len(types) != L:
        raise SymgptError(f"{f.where}: layer_types lists {len(types)} layers, num_hidden_layers is {L}")
    return types.count("linear_attention")


def read_minimax(f: Fields):
    """transformers' MiniMaxConfig (MiniMaxForCausalLM): Mixtral's attention and experts, lightning
    layers where ``layer_types`` says ``linear_attention`` (the default: every second layer, the
    first full)."""
    flags, sizes = llama_like(f, dict(V=32000, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=131072))
    # MiniMaxRotaryEmbedding's default rope rotates the whole head whatever partial_rotary_factor says
    flags["rotary_pct"] = None
    if f.cfg.get("sliding_window") is not None:
        raise SymgptError(f"{f.where}: sliding_window in the attention layers is not modelled for this model type")
    f.silent("sliding_window")
    L = sizes["L"]
    n = _pattern(f, L, ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(L)])
    if n == L:
        raise SymgptError(f"{f.where}: every layer a linear_attention layer (no softmax attention) is not "
                          "modelled for this model type")
    flags.update(linear_layers=n, full_layers=None, lightning_block=f.int("block_size", 256), norm_residual=True)
    sizes["E"] = f.int("num_local_experts", 8)
    sizes["k"] = f.int("num_experts_per_tok", 2)
    factors = {k: f.cfg.get(k, 1) for k in _FACTORS}
    f.silent(*_FACTORS)
    if any(v != 1 for v in factors.values()):
        f.notes.append("MiniMax weights each residual and each branch output by constants (" + ", ".join(
            f"{k} {v}" for k, v in factors.items() if v != 1) + "): elementwise products not counted (no "
            "parameters, no matmul)")
    return "minimax", flags, sizes


READERS = {"minimax": Reader(read_minimax, ("MiniMaxForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()
