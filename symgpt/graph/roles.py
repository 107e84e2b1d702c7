"""Roles: what each node of an architecture *is*, the contract between families and consumers.

A family names its nodes as its source does (``blocks/attention/qkv`` for GPT-2,
``encoder/layer/attention/self/query`` for BERT, ...). What the rest of symgpt needs to know --
which op is the token embedding, which tensors are the keys and values a cache holds, which
matmul is the LM head, which repeated group is a stack of layers and how many there are --
it asks for by *role*, never by path:

>>> arch.find(roles.KEY_HEADS)            # every key-heads node, in forward order
>>> arch.first(roles.HEAD)                # the LM head (or None)
>>> [g.name for g in arch.stacks()]       # the repeated stacks, e.g. ['blocks']

A node's role is declared with ``Builder.op(..., role=roles.QUERY)``; a repeated group's with
``Builder.repeat(..., role=roles.STACK, length=T)``. Every built-in family declares every node's
role (its ``Builder(..., declared_roles=True)`` refuses a node that does not), so no role depends
on a path. A user's own architecture that declares none, named after GPT-2's scheme, gets them
from :func:`infer`, which reads GPT-2's path scheme, so old declarations keep working.

Roles are plain strings, grouped by the part of the model they belong to. Cross-attention in an
encoder--decoder uses the ``cross_attention.*`` roles, which the self-attention consumers do not
see.
"""

from __future__ import annotations

# --- inputs ---------------------------------------------------------------------------------
TOKENS = "input.tokens"              # token ids (B, T) (an encoder--decoder has two: (B, T_enc), (B, T_dec))
TOKEN_TYPES = "input.token_types"    # BERT's segment ids (B, T)
PIXELS = "input.pixels"              # an image batch (B, C, S, S)

# --- embeddings -----------------------------------------------------------------------------
TOKEN_EMBEDDING = "embedding.token"
POSITION_EMBEDDING = "embedding.position"
TOKEN_TYPE_EMBEDDING = "embedding.token_type"
PATCH_EMBEDDING = "embedding.patch"
ROTARY_TABLE = "embedding.rotary"
CLASS_TOKEN = "embedding.class_token"  # ViT's learned [CLS] token, prepended to the patches
PATCH_FLATTEN = "embedding.patch_flatten"
EMBEDDING_NORM = "embedding.norm"    # a norm of the embeddings (BERT, BART's layernorm_embedding)
RELATIVE_BIAS = "embedding.relative_bias"  # T5's bucketed relative position bias, once per stack
EMBEDDING_ADD = "embedding.add"
EMBEDDING_SCALE = "embedding.scale"
PROJECT_IN = "embedding.project_in"  # embeddings narrower than d: projected in and out
PROJECT_OUT = "embedding.project_out"
DROPOUT = "dropout"

# --- norms ----------------------------------------------------------------------------------
ATTENTION_NORM = "norm.attention"    # (post-norm blocks: the norm after the attention residual)
CROSS_NORM = "norm.cross_attention"
FFN_NORM = "norm.ffn"
FINAL_NORM = "norm.final"
QUERY_NORM = "norm.q"                # a norm on the queries (Qwen3, Gemma 3: per head; OLMo 2: all heads)
KEY_NORM = "norm.k"
POST_ATTENTION_NORM = "norm.post_attention"  # a norm on the attention output, before its residual add
POST_FFN_NORM = "norm.post_ffn"      # a norm on the FFN output, before its residual add (Gemma 2, OLMo 2)

# --- attention (self) -----------------------------------------------------------------------
QKV = "attention.qkv"                # a fused Q/K/V projection
QUERY = "attention.q"                # the query projection (or the slice of a fused one)
KEY = "attention.k"
VALUE = "attention.v"
QUERY_HEADS = "attention.q_heads"    # (B, h, T, d_head)
KEY_HEADS = "attention.k_heads"      # the keys a KV cache holds (before any repeat)
VALUE_HEADS = "attention.v_heads"
QUERY_ROTARY = "attention.q_rotary"
KEY_ROTARY = "attention.k_rotary"
KEY_REPEAT = "attention.k_repeat"    # grouped-query attention: K heads repeated h/h_kv times
VALUE_REPEAT = "attention.v_repeat"
SCORES = "attention.scores"          # Q·Kᵀ
ALIBI = "attention.alibi"
POSITION_BIAS = "attention.position_bias"  # scores + a relative position bias
SCALE = "attention.scale"
MASK = "attention.mask"
SOFTMAX = "attention.softmax"
VALUES = "attention.values"          # A·V
MERGE = "attention.merge"
OUT = "attention.out"                # the output projection
ATTENTION_RESIDUAL = "residual.attention"
SCORE_SOFTCAP = "attention.softcap"  # c·tanh(S/c) on the scores (Gemma 2)
QUERY_PARTS = "attention.q_parts"    # a query assembled from parts (MLA: no-position and rotary halves)
KEY_PARTS = "attention.k_parts"      # keys assembled from parts (MLA: up-projected and shared rotary key)

# --- multi-latent attention (DeepSeek-V2/V3) --------------------------------------------------
# what an MLA cache holds: the normalised latent (B, T, kv_lora_rank) and the one rotary key
# shared by every head (B, 1, T, qk_rope_head_dim) -- not keys and values per head
QUERY_DOWN = "attention.q_down"      # q_a_proj: d -> q_lora_rank
QUERY_LATENT_NORM = "norm.q_latent"  # q_a_layernorm
QUERY_UP = "attention.q_up"          # q_b_proj: q_lora_rank -> h·(nope + rope)
KV_DOWN = "attention.kv_down"        # kv_a_proj_with_mqa: d -> kv_lora_rank + rope
KV_LATENT = "attention.kv_latent"    # kv_a_layernorm's output: the compressed latent a cache holds
KEY_ROPE = "attention.k_rope"        # the shared rotary key a cache holds (after RoPE)
KV_UP = "attention.kv_up"            # kv_b_proj: kv_lora_rank -> h·(nope + v)
QUERY_NOPE = "attention.q_nope"      # each query head's part without positions
QUERY_ROPE = "attention.q_rope"      # each query head's rotary part (before RoPE)
KV_DOWN_LATENT = "attention.kv_down_latent"  # the latent part of kv_a_proj's output (before its norm)
KV_DOWN_ROPE = "attention.kv_down_rope"      # the rotary-key part of kv_a_proj's output
KEY_ROPE_HEAD = "attention.k_rope_head"      # that part as one head (B, 1, T, rope), before RoPE
KV_UP_HEADS = "attention.kv_up_heads"        # kv_b_proj's output split into heads
KEY_NOPE = "attention.k_nope"        # each key head's up-projected part

# --- cross-attention (encoder--decoder) ------------------------------------------------------
CROSS_QUERY = "cross_attention.q"
CROSS_KEY = "cross_attention.k"
CROSS_VALUE = "cross_attention.v"
CROSS_QUERY_HEADS = "cross_attention.q_heads"
CROSS_KEY_HEADS = "cross_attention.k_heads"    # computed from the encoder's output in every layer
CROSS_VALUE_HEADS = "cross_attention.v_heads"
CROSS_SCORES = "cross_attention.scores"        # (B, h, T_dec, T_enc)
CROSS_SCALE = "cross_attention.scale"
CROSS_SOFTMAX = "cross_attention.softmax"
CROSS_VALUES = "cross_attention.values"
CROSS_MERGE = "cross_attention.merge"
CROSS_OUT = "cross_attention.out"
CROSS_RESIDUAL = "residual.cross_attention"

# --- feed-forward ---------------------------------------------------------------------------
FFN_UP = "ffn.up"
FFN_GATE = "ffn.gate"
FFN_GATE_UP = "ffn.gate_up"          # a fused gate/up projection
FFN_ACT = "ffn.act"
FFN_DOWN = "ffn.down"
FFN_MUL = "ffn.mul"                  # act(gate) ⊙ up
ROUTER = "ffn.router"
ROUTER_SOFTMAX = "ffn.router_softmax"  # the router's scores (a softmax, or DeepSeek-V3's sigmoid)
TOP_K = "ffn.topk"
COMBINE = "ffn.combine"
FFN_RESIDUAL = "residual.ffn"
SHARED_GATE = "ffn.shared_gate"      # Qwen2-MoE: sigmoid(x·w) scales the shared expert
SHARED_GATE_ACT = "ffn.shared_gate_act"
SHARED_SCALE = "ffn.shared_scale"    # the gate times the shared expert's output
SHARED_ADD = "ffn.shared_add"        # routed experts + shared expert

# --- output ---------------------------------------------------------------------------------
HEAD = "head"                        # the LM head (or a classifier)
LOGIT_SOFTCAP = "head.softcap"       # c·tanh(z/c) on the logits (Gemma 2)
LOGIT_SCALE = "head.logit_scale"     # the logits times a constant (Cohere's logit_scale)
MTP_NORM = "mtp.norm"                # multi-token prediction (DeepSeek-V3): the norms of h and of the embedding
MTP_CONCAT = "mtp.concat"            # [norm(h); norm(emb)]
MTP_PROJ = "mtp.proj"                # eh_proj: 2d -> d
HEAD_SCALE = "head.scale"            # T5's d^-1/2 rescaling before a tied head
HEAD_TRANSFORM = "head.transform"    # masked-LM head: dense d -> d ...
HEAD_TRANSFORM_ACT = "head.transform_act"   # ... its activation ...
HEAD_TRANSFORM_NORM = "head.transform_norm"  # ... and its norm, before the tied decoder
POOLED_TOKEN = "head.pooled_token"   # the first position ([CLS] / class token) a pooler or classifier reads
POOLER = "head.pooler"               # BERT's pooler: dense d -> d on the first token ...
POOLER_ACT = "head.pooler_act"       # ... and its tanh
LOSS = "loss"

# --- held, not run --------------------------------------------------------------------------
#: parameters a module holds that this forward does not run (``ops.Held``): the cross-attention
#: of an encoder--decoder's decoder run alone as a causal LM (transformers' BartForCausalLM)
HELD_CROSS_ATTENTION = "held.cross_attention"

# --- state-space mixers (Mamba, Mamba-2) ---------------------------------------------------
MIXER_NORM = "norm.mixer"            # the pre-norm of a state-space block
SSM_IN = "ssm.in_proj"               # in_proj: d -> the mixer's streams (x, gate; Mamba-2: also B, C, dt)
SSM_SPLIT = "ssm.split"              # one stream of a fused projection's output
SSM_CONV = "ssm.conv"                # the depthwise causal conv1d over time
SSM_CONV_ACT = "ssm.conv_act"        # its activation
SSM_X = "ssm.x_proj"                 # Mamba's x_proj: d_inner -> dt rank + B + C
SSM_NORM = "norm.ssm"                # Falcon-Mamba's parameter-free norms of dt, B and C
SSM_DT = "ssm.dt_proj"               # Mamba's dt_proj: dt rank -> d_inner
SSM_SCAN = "ssm.scan"                # the selective scan (Mamba) or the chunked SSD scan (Mamba-2)
SSM_GATE_ACT = "ssm.gate_act"        # silu(gate)
SSM_GATE = "ssm.gate"                # y * silu(gate)
SSM_OUT_NORM = "norm.ssm_out"        # Mamba-2's grouped RMSNorm of the gated scan output
SSM_OUT = "ssm.out_proj"             # out_proj: d_inner -> d
MIXER_RESIDUAL = "residual.mixer"
PARALLEL_SUM = "ssm.parallel_sum"    # attention and a Mamba mixer side by side, outputs summed (Falcon-H1)

# --- groups ---------------------------------------------------------------------------------
STACK = "stack"                      # a stack of identical layers (× its count)
EXPERTS = "experts"                  # the experts of a mixture (× E, k active)

#: the roles of the tensors an inference cache holds per layer: keys and values per KV head
#: (a plain cache), or an MLA cache's latent and shared rotary key
PLAIN_CACHE: tuple[str, ...] = (KEY_HEADS, VALUE_HEADS)
LATENT_CACHE: tuple[str, ...] = (KV_LATENT, KEY_ROPE)

#: what tensor parallelism keeps whole on every rank (besides norms, residuals and position
#: tables): an MLA layer's low-rank down-projections, their slices and latent norms, and the
#: shared rotary key -- the latent a cache holds and every op that makes it -- a mixture's router
#: with its scores and top-k, and a shared expert's one-column gate (Qwen2-MoE). vLLM's
#: DeepseekV2 attention builds q_a_proj and kv_a_proj_with_mqa as ``ReplicatedLinear`` (q_b_proj,
#: kv_b_proj ``ColumnParallelLinear``, o_proj ``RowParallelLinear``) and its MoE gate unsharded; Megatron-Core's MLA builds
#: linear_q_down_proj and linear_kv_down_proj with ``parallel_mode="duplicated"``, and its
#: TopKRouter holds the whole router weight on each rank. Their weights, FLOPs, bytes and saved
#: tensors count whole per rank; the up-projections, the attention, the output projection and the
#: experts stay split.
TP_REPLICATED: frozenset[str] = frozenset(LATENT_CACHE + (
    QUERY_DOWN, QUERY_LATENT_NORM, KV_DOWN, KV_DOWN_LATENT, KV_DOWN_ROPE, KEY_ROPE_HEAD,
    ROUTER, ROUTER_SOFTMAX, TOP_K, SHARED_GATE, SHARED_GATE_ACT))

#: every node role, for validation and documentation (every upper-case string constant above)
NODE_ROLES: frozenset[str] = frozenset(
    v for k, v in dict(globals()).items()
    if k.isupper() and not k.startswith("_") and isinstance(v, str) and v not in (STACK, EXPERTS)
)
GROUP_ROLES: frozenset[str] = frozenset({STACK, EXPERTS})

#: the families of roles: the part of a model a role belongs to (breakdowns, colours)
#: what an inference cache holds by default (an op declared with ``Builder.op(..., cached=True)``
#: or ``cached=False`` overrides it): the key and value heads of self-attention and of
#: cross-attention (computed once per request from the encoder's output), or an MLA layer's
#: latent and shared rotary key (transformers' DeepSeek-V2/V3 update the cache with those and
#: re-expand every cached position through kv_b_proj at each step). The cache keeps the tensor
#: after the per-token ops listed in CACHE_AFTER that follow it: keys are cached normed (Qwen3's,
#: Gemma 3's per-head key norm) and rotated.
CACHED: frozenset[str] = frozenset(PLAIN_CACHE + LATENT_CACHE + (CROSS_KEY_HEADS, CROSS_VALUE_HEADS))
CACHE_AFTER: frozenset[str] = frozenset({KEY_NORM, KEY_ROTARY})


def part_of(role: str | None) -> str | None:
    """``attention.q`` -> ``attention``; ``norm.final`` -> ``norm``; ``head`` -> ``head``."""
    if role is None:
        return None
    return role.split(".", 1)[0]


# --- GPT-2's path scheme, read as roles (families that declare no roles) ----------------------
#: path inside a stack (or at the top level) -> role
_GPT2_PATHS: dict[str, str] = {
    "input_ids": TOKENS,
    "embedding/token": TOKEN_EMBEDDING,
    "embedding/position": POSITION_EMBEDDING,
    "embedding/rotary": ROTARY_TABLE,
    "embedding/add": EMBEDDING_ADD,
    "embedding/scale": EMBEDDING_SCALE,
    "embedding/project_in": PROJECT_IN,
    "embedding/project_out": PROJECT_OUT,
    "embedding/dropout": DROPOUT,
    "attention/dropout": DROPOUT,
    "attention/dropout_out": DROPOUT,
    "ffn/dropout": DROPOUT,
    "norms/attention": ATTENTION_NORM,
    "norms/ffn": FFN_NORM,
    "final_norm": FINAL_NORM,
    "attention/qkv": QKV,
    "attention/q": QUERY,
    "attention/k": KEY,
    "attention/v": VALUE,
    "attention/q_heads": QUERY_HEADS,
    "attention/k_heads": KEY_HEADS,
    "attention/v_heads": VALUE_HEADS,
    "attention/q_rotary": QUERY_ROTARY,
    "attention/k_rotary": KEY_ROTARY,
    "attention/k_repeat": KEY_REPEAT,
    "attention/v_repeat": VALUE_REPEAT,
    "attention/scores": SCORES,
    "attention/scale": SCALE,
    "attention/alibi": ALIBI,
    "attention/mask": MASK,
    "attention/softmax": SOFTMAX,
    "attention/values": VALUES,
    "attention/merge": MERGE,
    "attention/proj": OUT,
    "attention/residual": ATTENTION_RESIDUAL,
    "ffn/up": FFN_UP,
    "ffn/gate": FFN_GATE,
    "ffn/gate_up": FFN_GATE_UP,
    "ffn/act": FFN_ACT,
    "ffn/down": FFN_DOWN,
    "ffn/mul": FFN_MUL,
    "ffn/router": ROUTER,
    "ffn/router_softmax": ROUTER_SOFTMAX,
    "ffn/topk": TOP_K,
    "ffn/combine": COMBINE,
    "ffn/residual": FFN_RESIDUAL,
    "lm_head": HEAD,
    "loss": LOSS,
}


def infer(path: str, groups: list[str]) -> str | None:
    """The role GPT-2's path scheme gives *path*, whose enclosing groups are *groups* (outermost
    first): the path is read relative to the outermost group; inside a nested group (experts)
    the part relative to that group is read as an FFN part (``blocks/ffn/experts/up`` ->
    ``ffn.up``)."""
    local = path
    if groups:
        local = path[len(groups[0]) + 1:] if path.startswith(groups[0] + "/") else path
    if local in _GPT2_PATHS:
        return _GPT2_PATHS[local]
    if len(groups) > 1 and path.startswith(groups[-1] + "/"):
        inner = path[len(groups[-1]) + 1:]
        return _GPT2_PATHS.get(f"ffn/{inner}")
    return None


def check(role: str | None, *, group: bool = False) -> str | None:
    """*role* itself, or a clear error for a name that is not a role."""
    from ..core.errors import SymgptError

    if role is None:
        return None
    known = GROUP_ROLES if group else NODE_ROLES
    if role not in known:
        raise SymgptError(f"unknown {'group ' if group else ''}role {role!r}; roles: {', '.join(sorted(known))}")
    return role
