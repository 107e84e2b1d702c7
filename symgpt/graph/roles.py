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
ATTENTION_SUB_NORM = "norm.attention_sub"  # a norm of the merged heads before the output projection (BitNet)
FFN_SUB_NORM = "norm.ffn_sub"        # a norm of the FFN's hidden activations before its down projection (BitNet)

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
# differential attention (DiffLlama): each of two attention calls reads one half of V's heads
VALUE_HALF = "attention.v_half"      # one half of the value heads, before its repeat
DIFF_COMBINE = "attention.differential"  # Z1 - λ·Z2 with the learned λ vectors
DIFF_NORM = "norm.differential"      # the parameter-free RMSNorm of each 2·d_head pair of heads
DIFF_SCALE = "attention.differential_scale"  # × (1 − λ_init)
# dynamic-mask attention (Doge): dt = dt_proj(V), exp(A·softplus(dt)) added to the scores
DYNAMIC_DT = "attention.dynamic_dt"
DYNAMIC_MASK = "attention.dynamic_mask"
RESIDUAL_SCALE = "residual.scale"    # a learned per-channel scale of the residual (Doge)
# mixture of attention heads (JetMoE): the query and output projections are experts
MOA_ROUTER = "attention.router"      # the router of the attention experts
MOA_ROUTER_SOFTMAX = "attention.router_softmax"
MOA_TOP_K = "attention.topk"
MOA_SLOTS = "attention.expert_slots"  # each token's k experts' queries side by side
MOA_SLOT = "attention.expert_slot"   # one slot's heads, the input of an output-projection expert
MOA_COMBINE = "attention.combine"    # Σ weights · output experts
EXPERTS_BIAS = "ffn.experts_bias"    # a learned bias after the experts' weighted sum (JetMoE)
ATTENTION_BIAS = "attention.experts_bias"
# CPM-Ant: prompt ids before the tokens, dropped again before the head
PROMPT_TOKENS = "embedding.prompt_tokens"
DROP_PROMPT = "head.drop_prompt"
ATTENTION_GATE = "attention.gate"    # an output gate's projection of the layer input (AFMoE, Laguna)
ATTENTION_GATE_HEADS = "attention.gate_heads"  # a per-head gate as (B, h, T, 1)
ATTENTION_GATE_BIAS = "attention.gate_bias"    # a learned bias per head added to the gate (Beam)
ATTENTION_GATE_ACT = "attention.gate_act"      # its sigmoid or softplus
ATTENTION_GATE_MUL = "attention.gate_mul"      # the attention output times the gate
SINK_SCALE = "attention.sink_scale"  # each head's output rows times σ(lse(S) - sink) (GraniteSWA)

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

# --- DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2; transformers' DeepseekV32Indexer)
# it runs under torch.no_grad (``Builder.op(..., no_grad=True)``); its key is cached per layer
INDEX_QUERY = "attention.index_q"            # wq_b: q_lora_rank -> index heads · index_head_dim
INDEX_QUERY_HEADS = "attention.index_q_heads"
INDEX_QUERY_ROTARY = "attention.index_q_rotary"
INDEX_KEY = "attention.index_k"              # wk: d -> index_head_dim (one key for every index head)
INDEX_KEY_NORM = "attention.index_k_norm"    # k_norm (a LayerNorm with bias)
INDEX_KEY_HEAD = "attention.index_k_head"    # the key as one head (B, 1, T, index_head_dim)
INDEX_KEY_ROTARY = "attention.index_k_rotary"  # the rotated key: what the indexer's cache holds
INDEX_SCORES = "attention.index_scores"      # q·kᵀ per index head
INDEX_SCALE = "attention.index_scale"
INDEX_RELU = "attention.index_relu"
INDEX_WEIGHTS = "attention.index_weights"    # weights_proj: d -> index heads
INDEX_WEIGHTS_SCALE = "attention.index_weights_scale"
INDEX_SUM = "attention.index_sum"            # the head-weighted sum: one index score per key
INDEX_MASK = "attention.index_mask"          # the causal mask of the index scores
INDEX_TOP_K = "attention.index_top_k"        # the selected keys' indices
SPARSE_MASK = "attention.sparse_mask"        # the attention scores masked outside the selected keys

# --- A.X-K2 (transformers' AXK2Attention, AXK2GatedRMSNorm) ---------------------------------------
QUERY_GATE_INPUT = "attention.q_gate_input"  # [norm(C_Q), C_Q]: the query latent and its un-normed copy
QUERY_GATE = "attention.q_gate"              # q_gate_proj: 2·q_lora_rank -> h·(nope + rope + v)
QUERY_GATE_HEADS = "attention.q_gate_heads"
OUTPUT_GATE = "attention.output_gate"        # each head's gate (v of q_gate_proj's output per head)
OUTPUT_GATE_MERGE = "attention.output_gate_merge"
OUTPUT_GATE_ACT = "attention.output_gate_act"  # sigmoid
OUTPUT_GATE_MUL = "attention.output_gate_mul"  # Z ⊙ sigmoid(gate), before o_proj
NORM_GATE_UP = "norm.gate_up"                # a gated norm's fc1: d -> gated_norm_rank
NORM_GATE_ACT = "norm.gate_act"              # its SiLU
NORM_GATE_DOWN = "norm.gate_down"            # its fc2: gated_norm_rank -> d
NORM_GATE_SIGMOID = "norm.gate_sigmoid"
NORM_GATE_MUL = "norm.gate_mul"              # y ⊙ sigmoid(fc2(silu(fc1(y))))

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
SCORE_BIAS = "ffn.score_bias"        # a learned bias per expert on the scores, for the choice only
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

# --- Gemma 4: a norm of each value head, and per-layer embeddings (PLE) -------------------------
VALUE_NORM = "norm.v"                # a norm of each value head (Gemma 4's v_norm, no scale)
PER_LAYER_EMBEDDING = "per_layer.embedding"    # embed_tokens_per_layer: (V_ple, L·p) rows, × √p
PER_LAYER_SCALE = "per_layer.scale"  # the scalings of the per-layer inputs
PER_LAYER_MODEL_PROJECTION = "per_layer.model_projection"  # d -> L·p from the token embeddings
PER_LAYER_HEADS = "per_layer.heads"  # the L·p inputs viewed as L slices of p (and merged back)
PER_LAYER_PROJECTION_NORM = "per_layer.projection_norm"   # a norm of p on each slice
PER_LAYER_COMBINE = "per_layer.combine"  # projection + embedding
PER_LAYER_SLICE = "per_layer.slice"  # the layer's own slice (B, T, p)
PER_LAYER_GATE = "per_layer.gate"    # per_layer_input_gate: d -> p
PER_LAYER_ACT = "per_layer.act"
PER_LAYER_MUL = "per_layer.mul"      # act(gate) ⊙ the layer's slice
PER_LAYER_PROJECTION = "per_layer.projection"  # p -> d
PER_LAYER_NORM = "per_layer.norm"    # post_per_layer_input_norm
PER_LAYER_RESIDUAL = "residual.per_layer"

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
# --- encoders run as causal LMs (families/encoder_causal.py) ----------------------------------
EXTRA_IDS = "input.extra_ids"        # RoCBert's shape and pronunciation ids (B, T): zeros when not given
EXTRA_EMBEDDING = "embedding.extra"  # RoCBert's shape and pronunciation embeddings ...
EMBEDDING_CONCAT = "embedding.concat"  # ... concatenated with the token embeddings, then mapped to d
ADAPTER_NORM = "adapter.norm"        # X-MOD: the LayerNorm before the language adapter (its own) ...
ADAPTER_DOWN = "adapter.down"        # ... the adapter of the batch's language: dense d -> d/r ...
ADAPTER_ACT = "adapter.act"
ADAPTER_UP = "adapter.up"            # ... dense d/r -> d ...
ADAPTER_RESIDUAL = "residual.adapter"  # ... and its residual add
HELD_ADAPTER = "held.adapter"        # the adapters of the other languages: held, not run
HELD_EMBEDDING = "held.embedding"    # an embedding table held and not run (RoCBert with enable_shape=false)
PARALLEL_SUM = "ssm.parallel_sum"    # attention and a Mamba mixer side by side, outputs summed (Falcon-H1)
# --- shared blocks run at several layers (Zamba, Zamba2: one transformer block, weights once) ----
SHARED_INPUT_CONCAT = "attention.input_concat"  # [hidden; embeddings] (B, T, 2d), the shared block's input
SHARED_OUT_LINEAR = "adapter.shared_linear"  # the per-use d -> d map of the shared block's output ...
SHARED_OUT_ADD = "ssm.shared_add"    # ... added to the Mamba layer's input before its norm
LORA_DOWN = "adapter.lora_down"      # a per-use low-rank adapter: d_in -> r ...
LORA_UP = "adapter.lora_up"          # ... r -> d_out ...
LORA_ADD = "adapter.lora_add"        # ... added to the projection it adapts
# vision--language models: the connector between a vision tower and the text decoder
VISION_POOL = "vision.pool"          # the patch grid average-pooled (Gemma 3)
VISION_PROBE = "vision.probe"        # a learned query over the patches (SigLIP's attention-pooling head)
VISION_SELECT = "vision.select"      # the patches the projector reads (the class token dropped: LLaVA)
VISION_NORM = "vision.norm"          # a norm in the multi-modal projector
VISION_PROJECTOR = "vision.projector"  # a linear map of the projector (vision width -> text width)
VISION_ACT = "vision.act"            # the projector's activation
IMAGE_MERGE = "vision.merge"         # image features placed at the image-token positions
# --- recurrent layers: RWKV's time-mix and channel-mix ----------------------------------------
TOKEN_SHIFT = "ssm.token_shift"      # x·μ + shift(x)·(1 - μ): a position mixed with the previous one
RECURRENT_KEY = "ssm.key"            # a recurrent mixer's key, value and receptance projections
RECURRENT_VALUE = "ssm.value"
RECEPTANCE = "ssm.receptance"
RECEPTANCE_ACT = "ssm.receptance_act"  # sigmoid(receptance)
WKV = "ssm.wkv"                      # RWKV's WKV recurrence
RECEPTANCE_GATE = "ssm.receptance_gate"  # sigmoid(receptance) · the mixer's output
FFN_RECEPTANCE = "ffn.receptance"    # RWKV's channel-mix receptance d -> d ...
FFN_RECEPTANCE_ACT = "ffn.receptance_act"  # ... its sigmoid ...
FFN_RECEPTANCE_GATE = "ffn.receptance_gate"  # ... times the channel-mix value
RECURRENT_GATE_BRANCH = "ssm.gate_branch"  # RecurrentGemma: linear_y, the branch that gates the recurrence ...
RECURRENT_GATE_BRANCH_ACT = "ssm.gate_branch_act"  # ... and its activation
RECURRENT_X = "ssm.x"                # RecurrentGemma: linear_x, the recurrence's input branch
RG_LRU = "ssm.rg_lru"                # the Real-Gated Linear Recurrent Unit (Griffin)
RECURRENT_QUERY = "ssm.query"        # xLSTM: the mLSTM's query projection
RECURRENT_GATE = "ssm.gate_preact"   # xLSTM: an input or forget gate's pre-activation d -> heads ...
RECURRENT_GATE_SOFTCAP = "ssm.gate_softcap"  # ... soft-capped
MLSTM_CELL = "ssm.mlstm"             # xLSTM's matrix-memory cell
NORM_BIAS = "norm.bias"              # the shift of an RMSNorm that has one (xLSTM with use_bias)
# speech encoders: the convolutional front-end over mel frames (Whisper)
AUDIO = "input.audio"                # log-mel features (B, N_mel, frames)
AUDIO_CONV = "embedding.audio_conv"  # a 1-D convolution over the frames
AUDIO_ACT = "embedding.audio_act"    # the activation after each convolution
AUDIO_TRANSPOSE = "embedding.audio_transpose"  # (B, d, frames) -> (B, frames, d), a view
AUDIO_POOL = "audio.pool"             # the encoder's positions average-pooled in pairs (Qwen2-Audio)
AUDIO_PROJECTOR = "audio.projector"   # the linear map from the audio width to the text width
# a time-conditioned scale after the FFN norm (Voxtral Realtime's ada_rms_norm)
TIME_MODULATION = "ffn.time_modulation"
# audio codebook tokens embedded and summed into the token embeddings (Kyutai speech-to-text)
CODEBOOK_EMBEDDING = "embedding.codebooks"
CODEBOOK_TOKENS = "input.codebooks"

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
    ROUTER, ROUTER_SOFTMAX, TOP_K, SHARED_GATE, SHARED_GATE_ACT, MOA_ROUTER, MOA_ROUTER_SOFTMAX, MOA_TOP_K, SCORE_BIAS)) | frozenset({
    # the lightning indexer: vLLM's DeepSeek-V3.2 Indexer builds wq_b, wk and weights_proj as
    # ReplicatedLinear, and transformers' tensor-parallel plan leaves them whole
    INDEX_QUERY, INDEX_QUERY_HEADS, INDEX_QUERY_ROTARY, INDEX_KEY, INDEX_KEY_NORM, INDEX_KEY_HEAD,
    INDEX_KEY_ROTARY, INDEX_SCORES, INDEX_SCALE, INDEX_RELU, INDEX_WEIGHTS, INDEX_WEIGHTS_SCALE, INDEX_SUM,
    INDEX_MASK, INDEX_TOP_K}) | frozenset({
    # A.X-K2's gated norms (not in transformers' tensor-parallel plan) and the query latent pair
    QUERY_GATE_INPUT, NORM_GATE_UP, NORM_GATE_ACT, NORM_GATE_DOWN, NORM_GATE_SIGMOID, NORM_GATE_MUL})

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
CACHE_AFTER: frozenset[str] = frozenset({KEY_NORM, KEY_ROTARY, VALUE_NORM})


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
