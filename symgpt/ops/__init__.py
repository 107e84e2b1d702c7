"""The op catalog. Each op definition registers itself when its module is imported, and a module
is imported the first time one of its ops is named (``ops.Rotary``, ``from symgpt.ops import
Conv2d``): a GPT-2 never imports the vision, mixture-of-experts or rotary ops. ``CATALOG`` is the
explicit table of every op definition; ``registered_kinds()`` and ``op_class()`` import it all."""

from ..core.lazy import Ref
from . import base
from .base import (  # noqa: F401
    Context,
    MissingRule,
    Op,
    ParamSpec,
    Saved,
    Shape,
    Work,
    check_registered,
    numel,
)

#: op definition -> where it is declared (imported on first use)
CATALOG = {
    "CausalMask": Ref("symgpt.ops.attention", "CausalMask"),
    "Dropout": Ref("symgpt.ops.attention", "Dropout"),
    "Softmax": Ref("symgpt.ops.attention", "Softmax"),
    "SinkSoftmax": Ref("symgpt.ops.sinks", "SinkSoftmax"),
    "SinkScale": Ref("symgpt.ops.sinks", "SinkScale"),
    "GELU": Ref("symgpt.ops.elementwise", "GELU"),
    "Add": Ref("symgpt.ops.elementwise", "Add"),
    "Mul": Ref("symgpt.ops.elementwise", "Mul"),
    "Scale": Ref("symgpt.ops.elementwise", "Scale"),
    "HeadBias": Ref("symgpt.ops.elementwise", "HeadBias"),
    "SiLU": Ref("symgpt.ops.elementwise", "SiLU"),
    "Embedding": Ref("symgpt.ops.embedding", "Embedding"),
    "PositionEmbedding": Ref("symgpt.ops.embedding", "PositionEmbedding"),
    "Linear": Ref("symgpt.ops.linear", "Linear"),
    "Matmul": Ref("symgpt.ops.linear", "Matmul"),
    "CrossEntropy": Ref("symgpt.ops.loss", "CrossEntropy"),
    "LayerNorm": Ref("symgpt.ops.norm", "LayerNorm"),
    "RMSNorm": Ref("symgpt.ops.norm", "RMSNorm"),
    "FirstToken": Ref("symgpt.ops.views", "FirstToken"),
    "MergeHeads": Ref("symgpt.ops.views", "MergeHeads"),
    "RepeatKV": Ref("symgpt.ops.views", "RepeatKV"),
    "Slice": Ref("symgpt.ops.views", "Slice"),
    "SplitHeads": Ref("symgpt.ops.views", "SplitHeads"),
    "ReLU": Ref("symgpt.ops.activations", "ReLU"),
    "ReLU2": Ref("symgpt.ops.activations", "ReLU2"),
    "Sigmoid": Ref("symgpt.ops.activations", "Sigmoid"),
    "SoftCap": Ref("symgpt.ops.activations", "SoftCap"),
    "Softplus": Ref("symgpt.ops.activations", "Softplus"),
    "Tanh": Ref("symgpt.ops.activations", "Tanh"),
    "XIELU": Ref("symgpt.ops.activations", "XIELU"),
    "Concat": Ref("symgpt.ops.concat", "Concat"),
    "MoECombine": Ref("symgpt.ops.moe", "MoECombine"),
    "TopK": Ref("symgpt.ops.moe", "TopK"),
    "ScoreBias": Ref("symgpt.ops.moe", "ScoreBias"),
    "AlibiBias": Ref("symgpt.ops.positions", "AlibiBias"),
    "RelativePositionBias": Ref("symgpt.ops.positions", "RelativePositionBias"),
    "Rotary": Ref("symgpt.ops.positions", "Rotary"),
    "RotaryTable": Ref("symgpt.ops.positions", "RotaryTable"),
    "SinusoidalPositions": Ref("symgpt.ops.positions", "SinusoidalPositions"),
    "AddPositions": Ref("symgpt.ops.vision", "AddPositions"),
    "ClassToken": Ref("symgpt.ops.vision", "ClassToken"),
    "Conv2d": Ref("symgpt.ops.vision", "Conv2d"),
    "FlattenPatches": Ref("symgpt.ops.vision", "FlattenPatches"),
    "Held": Ref("symgpt.ops.held", "Held"),
    # a token sequence regrouped into other batches (Qwen2.5-VL's window attention)
    "Regroup": Ref("symgpt.ops.regroup", "Regroup"),
    # state-space layers
    "CausalConv1d": Ref("symgpt.ops.ssm", "CausalConv1d"),
    "SelectiveScan": Ref("symgpt.ops.ssm", "SelectiveScan"),
    "SSDScan": Ref("symgpt.ops.ssm", "SSDScan"),
    "GatedDeltaRule": Ref("symgpt.ops.delta", "GatedDeltaRule"),
    # --- recurrent layers: RWKV, RG-LRU, xLSTM ---
    "TokenShiftMix": Ref("symgpt.ops.rwkv", "TokenShiftMix"),
    "WKV": Ref("symgpt.ops.rwkv", "WKV"),
    "RGLRU": Ref("symgpt.ops.rglru", "RGLRU"),
    "MLSTM": Ref("symgpt.ops.mlstm", "MLSTM"),
    # the Griffin recurrent block's convolution, whose inference state is K - 1 inputs
    "GriffinConv1d": Ref("symgpt.ops.rglru", "GriffinConv1d"),
    # DeepSeek Sparse Attention's lightning indexer
    "HeadWeightedSum": Ref("symgpt.ops.indexer", "HeadWeightedSum"),
    "IndexMask": Ref("symgpt.ops.indexer", "IndexMask"),
    "TopKIndices": Ref("symgpt.ops.indexer", "TopKIndices"),
    # --- differential attention, dynamic masks, mixtures of attention heads ---
    "DiffCombine": Ref("symgpt.ops.differential", "DiffCombine"),
    "HeadSlice": Ref("symgpt.ops.differential", "HeadSlice"),
    "ChannelScale": Ref("symgpt.ops.dynamic", "ChannelScale"),
    "DynamicMask": Ref("symgpt.ops.dynamic", "DynamicMask"),
    "ChannelBias": Ref("symgpt.ops.dynamic", "ChannelBias"),
    "MoESlots": Ref("symgpt.ops.moa", "MoESlots"),
    "PrependTokens": Ref("symgpt.ops.prompt", "PrependTokens"),
    "DropTokens": Ref("symgpt.ops.prompt", "DropTokens"),
    # vision--language models: pooled patch grids and image features among the tokens
    "AvgPoolPatches": Ref("symgpt.ops.vision", "AvgPoolPatches"),
    "MergeImageTokens": Ref("symgpt.ops.vision", "MergeImageTokens"),
    # patch grids regrouped into wider tokens: Idefics3's pixel shuffle, Pixtral's patch merger
    "PixelShuffle": Ref("symgpt.ops.pixel_shuffle", "PixelShuffle"),
    "PackImages": Ref("symgpt.ops.pixel_shuffle", "PackImages"),
    "AxialRotaryTable": Ref("symgpt.ops.pixel_shuffle", "AxialRotaryTable"),
    # Llama 4's vision encoder: the patch positions of its 2-D rotary
    "PatchPositions": Ref("symgpt.ops.llama4_vision", "PatchPositions"),
    # --- speech encoders (Whisper) ---
    "Conv1d": Ref("symgpt.ops.audio", "Conv1d"),
    "ChannelsLast": Ref("symgpt.ops.audio", "ChannelsLast"),
    "AddPositionRows": Ref("symgpt.ops.audio", "AddPositionRows"),
    "AvgPoolFrames": Ref("symgpt.ops.audio", "AvgPoolFrames"),
    # speech models: encoder positions stacked for a projector (Voxtral), a conditioning row prepended (Pop2Piano), a
    # gated linear unit over a convolution's channels (Speech2Text), Moonshine's unpadded stem
    "StackFrames": Ref("symgpt.ops.audio", "StackFrames"),
    "PrependRows": Ref("symgpt.ops.audio", "PrependRows"),
    "GLU": Ref("symgpt.ops.audio", "GLU"),
    "Conv1dValid": Ref("symgpt.ops.audio", "Conv1dValid"),
    "GroupNorm1": Ref("symgpt.ops.audio", "GroupNorm1"),
    # DoRA fine-tuning: the weight-norm scale and the rescaled output (peft's DoraLinearLayer)
    "DoraNorm": Ref("symgpt.ops.dora", "DoraNorm"),
    "DoraScale": Ref("symgpt.ops.dora", "DoraScale"),
    "DoraBase": Ref("symgpt.ops.dora", "DoraBase"),
    # --- linear attention: lightning attention (MiniMax-Text-01), Kimi delta attention (Kimi Linear, Ling 3) ---
    "LightningAttention": Ref("symgpt.ops.lightning", "LightningAttention"),
    "KimiDeltaRule": Ref("symgpt.ops.kda", "KimiDeltaRule"),
    # --- a time-conditioned scale of the residual stream (Voxtral Realtime's ada_rms_norm) ---
    "TimeModulation": Ref("symgpt.ops.modulation", "TimeModulation"),
    # --- audio codebook tokens embedded and summed into the text embeddings (Kyutai speech-to-text) ---
    "CodebookEmbeddings": Ref("symgpt.ops.codebooks", "CodebookEmbeddings"),
    # --- Llama 3.2 Vision's tiled encoder: padded tiles, the tile mask, intermediate layers' features ---
    "PadRows": Ref("symgpt.ops.tiles", "PadRows"),
    "TileMask": Ref("symgpt.ops.tiles", "TileMask"),
    "ExtraFeatures": Ref("symgpt.ops.tiles", "ExtraFeatures"),
    # parameters of a module every forward runs over an input not priced (IDEFICS's cross-attention layers)
    "HeldUnpriced": Ref("symgpt.ops.held_unpriced", "HeldUnpriced"),
    # --- an audio encoder over log-mel chunks attending within windows (Qwen3-ASR) ---
    "Conv2dStrided": Ref("symgpt.ops.audio_chunks", "Conv2dStrided"),
    "AddSinusoidRows": Ref("symgpt.ops.audio_chunks", "AddSinusoidRows"),
    "Rows": Ref("symgpt.ops.audio_chunks", "Rows"),
    "ConcatRows": Ref("symgpt.ops.audio_chunks", "ConcatRows"),
    # --- a Conformer encoder and a windowed Q-Former (Granite Speech) ---
    "DepthwiseConv1d": Ref("symgpt.ops.conformer", "DepthwiseConv1d"),
    "BatchNorm1d": Ref("symgpt.ops.conformer", "BatchNorm1d"),
    "RelPositionScores": Ref("symgpt.ops.conformer", "RelPositionScores"),
    "ExpandBatch": Ref("symgpt.ops.conformer", "ExpandBatch"),
    # vision towers' saved tensors as transformers' PyTorch code keeps them
    "LookupPositions": Ref("symgpt.ops.vision_saved", "LookupPositions"),
    "ScatterImageTokens": Ref("symgpt.ops.vision_saved", "ScatterImageTokens"),
    "SequenceFirst": Ref("symgpt.ops.vision_saved", "SequenceFirst"),
    "ImageRMSNorm": Ref("symgpt.ops.vision_saved", "ImageRMSNorm"),
}


def __getattr__(name: str):
    ref = CATALOG.get(name)
    if ref is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = ref.get()
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(CATALOG))


def _everything() -> None:
    for ref in CATALOG.values():
        ref.get()


def register(cls: type[Op]) -> type[Op]:
    """Class decorator: register your own op definition under ``cls.kind`` (the catalog is loaded
    first, so a kind the catalog has already raises here)."""
    _everything()
    return base.register(cls)


def registered_kinds() -> tuple[str, ...]:
    """The kind of every op definition of the catalog (and of any registered since)."""
    _everything()
    return base.registered_kinds()


def op_class(kind: str) -> type[Op]:
    """The registered op definition of *kind*; a clear error for an unknown kind."""
    _everything()
    return base.op_class(kind)
