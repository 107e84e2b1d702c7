"""The canonical symbols of symgpt: every expression it prints is over these names.

All are positive integers. How a symbol is *displayed* (LaTeX, notation profiles) is the
printers' concern; these names are the canonical SymPy spelling.
"""

from __future__ import annotations

import sympy

from .errors import SymgptError
from .flag_symbols import FLAG_SYMBOLS  # noqa: F401  (flag -> the symbol that shows its value)


def _sym(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, positive=True)


B = _sym("B")          # batch size (sequences per step)
T = _sym("T")          # sequence length
T_max = _sym("T_max")  # context length of a learned position table
d = _sym("d")          # model width (residual stream)
h = _sym("h")          # attention (query) heads
h_kv = _sym("h_kv")    # key/value heads (GQA/MQA); = h for multi-head attention
d_head = _sym("d_head")  # head dimension; = d/h unless a family sets it
L = _sym("L")          # layers (blocks)
V = _sym("V")          # vocabulary size
d_ff = _sym("d_ff")    # feed-forward inner width
E = _sym("E")          # experts in a mixture-of-experts FFN
k = _sym("k")          # experts per token (top-k)
W = _sym("W")          # sliding-window length
T_enc = _sym("T_enc")  # encoder sequence length (encoder--decoders)
T_dec = _sym("T_dec")  # decoder sequence length (encoder--decoders)
L_dec = _sym("L_dec")  # decoder layers (encoder--decoders; the encoder has L)
S_img = _sym("S_img")      # image side in pixels (vision: square images of S_img x S_img)
P_patch = _sym("P_patch")  # patch side in pixels (vision: (S_img/P_patch)^2 patches)
C_img = _sym("C_img")      # image channels (vision: 3 for RGB)
N_cls = _sym("N_cls")  # classes of a classification head
# state-space layers (Mamba, Mamba-2)
d_inner = _sym("d_inner")  # inner width of a state-space mixer (expand * d)
d_state = _sym("d_state")  # state size per channel (Mamba) or per head (Mamba-2)
d_conv = _sym("d_conv")    # kernel width of the depthwise causal convolution
r_dt = _sym("r_dt")        # rank of the time-step projection (Mamba)
h_ssm = _sym("h_ssm")      # state-space heads (Mamba-2)
G_ssm = _sym("G_ssm")      # groups sharing B and C (Mamba-2)
Q_chunk = _sym("Q_chunk")  # chunk length of the chunked scan (Mamba-2)
# vision--language models: the vision tower beside the text decoder, and the images it reads
N_img = sympy.Symbol("N_img", integer=True, nonnegative=True)  # images per sequence (0: text only)
d_v = _sym("d_v")      # vision tower width
h_v = _sym("h_v")      # vision tower attention heads
L_v = _sym("L_v")      # vision tower layers
d_ff_v = _sym("d_ff_v")  # vision tower feed-forward width
# speech models: the mel features an audio encoder reads
N_mel = _sym("N_mel")  # mel bins per frame (Whisper: num_mel_bins)
T_src = _sym("T_src")  # rows of the audio encoder's position table (Whisper: max_source_positions)
N_aud = sympy.Symbol("N_aud", integer=True, nonnegative=True)  # 30-s audio clips per sequence (0: text only)
d_a = _sym("d_a")      # audio encoder width (an audio encoder beside a text decoder)
h_a = _sym("h_a")      # audio encoder attention heads
L_a = _sym("L_a")      # audio encoder layers
d_ff_a = _sym("d_ff_a")  # audio encoder feed-forward width
# sizes a family reads as integer flags, shown as symbols of their own (each bound to its flag's
# value: FLAG_SYMBOLS): multi-latent attention (DeepSeek-AI 2024, "DeepSeek-V2", Sec. 2.1) and
# the widths of a mixture's dense layers, shared expert and routed experts where they are not d_ff
r_q = _sym("r_q")            # rank of the query latent (q_lora_rank)
r_kv = _sym("r_kv")          # rank of the key/value latent (kv_lora_rank)
d_nope = _sym("d_nope")      # each query/key head's dimensions without positions (qk_nope_head_dim)
d_rope = _sym("d_rope")      # each query/key head's rotary dimensions (qk_rope_head_dim)
d_hv = _sym("d_hv")          # each value head's dimensions (v_head_dim)
d_ff_dense = _sym("d_ff_dense")    # feed-forward width of the dense layers of a mixture
d_ff_shared = _sym("d_ff_shared")  # feed-forward width of the shared expert
d_ff_expert = _sym("d_ff_expert")  # feed-forward width of each routed expert (where it is not d_ff)
# layers of several kinds (hybrids): the count of each kind's stack, bound to its flag (FLAG_SYMBOLS)
L_ssm = _sym("L_ssm")            # Mamba layers, the mixer alone (Nemotron-H's M; Zamba's Mamba layers)
L_ssm_mlp = _sym("L_ssm_mlp")    # Mamba layers with a dense FFN (Bamba, Jamba)
L_ssm_moe = _sym("L_ssm_moe")    # Mamba layers with a mixture of experts (Jamba, Granite 4.0-H)
L_attn = _sym("L_attn")          # attention layers, attention alone (Nemotron-H's *)
L_attn_mlp = _sym("L_attn_mlp")  # attention layers with a dense FFN (Bamba, Jamba)
L_attn_moe = _sym("L_attn_moe")  # attention layers with a mixture of experts (Granite 4.0-H)
L_mlp = _sym("L_mlp")            # dense FFN layers, the FFN alone (Nemotron-H's -)
L_moe = _sym("L_moe")            # mixture-of-experts layers, the mixture alone (Nemotron-H's E)
L_par_mlp = _sym("L_par_mlp")    # attention and Mamba in parallel, then a dense FFN (Falcon-H1)
L_lin = _sym("L_lin")            # linear-attention layers among attention ones (Qwen3-Next, Kimi Linear)
L_conv = _sym("L_conv")          # short-convolution layers among attention ones (LFM2)
L_rec = _sym("L_rec")            # recurrent (RG-LRU) layers among attention ones (RecurrentGemma)
L_hyb = _sym("L_hyb")            # Zamba's hybrid layers (the shared transformer block, then Mamba)

#: name -> symbol, in the order they are documented.
CANONICAL: dict[str, sympy.Symbol] = {
    s.name: s for s in (B, T, T_max, d, h, h_kv, d_head, L, V, d_ff, E, k, W, T_enc, T_dec, L_dec, S_img,
                         P_patch, C_img, N_cls, d_inner, d_state, d_conv, r_dt, h_ssm, G_ssm, Q_chunk,
                         N_img, d_v, h_v, L_v, d_ff_v, N_mel, T_src, N_aud, d_a, h_a, L_a, d_ff_a,
                         r_q, r_kv, d_nope, d_rope, d_hv, d_ff_dense, d_ff_shared, d_ff_expert,
                         L_ssm, L_ssm_mlp, L_ssm_moe, L_attn, L_attn_mlp, L_attn_moe, L_mlp, L_moe, L_par_mlp,
                         L_lin, L_conv, L_rec, L_hyb)
}

#: one-line meaning of each symbol (for --help, tables and notation profiles).
MEANING: dict[str, str] = {
    "B": "batch size (sequences per step)",
    "T": "sequence length",
    "T_max": "context length of the learned position table",
    "d": "model width",
    "h": "attention heads",
    "h_kv": "key/value heads",
    "d_head": "head dimension",
    "L": "layers",
    "V": "vocabulary size",
    "d_ff": "feed-forward width",
    "E": "experts",
    "k": "experts per token",
    "W": "sliding-window length",
    "T_enc": "encoder sequence length",
    "T_dec": "decoder sequence length",
    "L_dec": "decoder layers (the encoder has L)",
    "S_img": "image side in pixels",
    "P_patch": "patch side in pixels",
    "C_img": "image channels",
    "N_cls": "classes of the classification head",
    "d_inner": "inner width of a state-space mixer",
    "d_state": "state size (per channel, or per head)",
    "d_conv": "kernel width of the causal convolution",
    "r_dt": "rank of the time-step projection",
    "h_ssm": "state-space heads",
    "G_ssm": "groups sharing B and C",
    "Q_chunk": "chunk length of the chunked scan",
    "N_img": "images per sequence",
    "d_v": "vision tower width",
    "h_v": "vision tower attention heads",
    "L_v": "vision tower layers",
    "d_ff_v": "vision tower feed-forward width",
    "N_mel": "mel bins per audio frame",
    "T_src": "audio encoder positions (its position table)",
    "N_aud": "audio clips per sequence",
    "d_a": "audio encoder width",
    "h_a": "audio encoder attention heads",
    "L_a": "audio encoder layers",
    "d_ff_a": "audio encoder feed-forward width",
    "r_q": "rank of the query latent (q_lora_rank)",
    "r_kv": "rank of the key/value latent (kv_lora_rank)",
    "d_nope": "query/key head dimensions without positions",
    "d_rope": "query/key head rotary dimensions",
    "d_hv": "value head dimensions",
    "d_ff_dense": "feed-forward width of the dense layers",
    "d_ff_shared": "feed-forward width of the shared expert",
    "d_ff_expert": "feed-forward width of each routed expert",
    "L_ssm": "Mamba layers (the mixer alone)",
    "L_ssm_mlp": "Mamba layers with a dense FFN",
    "L_ssm_moe": "Mamba layers with a mixture of experts",
    "L_attn": "attention layers (attention alone)",
    "L_attn_mlp": "attention layers with a dense FFN",
    "L_attn_moe": "attention layers with a mixture of experts",
    "L_mlp": "dense FFN layers (the FFN alone)",
    "L_moe": "mixture-of-experts layers (the mixture alone)",
    "L_par_mlp": "layers of attention and Mamba in parallel, with a dense FFN",
    "L_lin": "linear-attention layers (the others attention layers)",
    "L_conv": "short-convolution layers (the others attention layers)",
    "L_rec": "recurrent layers (the others attention layers)",
    "L_hyb": "hybrid layers (the shared transformer block, then Mamba)",
}


#: the sizes that may be 0 (a vision--language model's prompt with no image)
ZERO_ALLOWED = frozenset({"N_img", "N_aud"})

#: the sequence lengths: bound per call (``--set``), never used to choose a graph
LENGTHS = ("B", "T", "T_enc", "T_dec")


def symbol(name: str) -> sympy.Symbol:
    """The canonical symbol called *name*; a clear error for any other name."""
    try:
        return CANONICAL[name]
    except (KeyError, TypeError):
        known = ", ".join(CANONICAL)
        raise SymgptError(f"unknown symbol {name!r}; known symbols: {known}") from None


def as_expr(x) -> sympy.Expr:
    """An int or a SymPy expression as a SymPy expression (never parses text)."""
    if isinstance(x, bool) or not isinstance(x, (int, sympy.Basic)):
        raise SymgptError(f"expected an integer or a SymPy expression, got {type(x).__name__}")
    return sympy.Integer(x) if isinstance(x, int) else x


# --- the roofline's hardware numbers (not sizes: bound from a hardware profile or given directly,
# never set with --set); positive reals, so a time stays exact in closed form
F_peak = sympy.Symbol("F_peak", positive=True)      # peak FLOP/s of one device
BW_mem = sympy.Symbol("BW_mem", positive=True)      # memory (HBM) bandwidth of one device, bytes/s
BW_link = sympy.Symbol("BW_link", positive=True)    # interconnect bandwidth per device per direction

HARDWARE_SYMBOLS: dict[str, sympy.Symbol] = {s.name: s for s in (F_peak, BW_mem, BW_link)}
