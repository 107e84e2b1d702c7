"""Vision--language models read as a text decoder of a family symgpt already builds and a vision
tower beside it whose parameters are held (``blocks/vlm_towers.py``): counted, not run, as the
model's forward over token ids runs none of them.

- Qwen3-VL (Qwen Team 2025; transformers' ``Qwen3VLForConditionalGeneration``,
  ``Qwen3VLMoeForConditionalGeneration``) and Qwen3.5 (``Qwen3_5ForConditionalGeneration``,
  ``Qwen3_5MoeForConditionalGeneration``): a Qwen3 / Qwen3-MoE / Qwen3.5 text decoder and the
  tower ``Qwen3VLVisionModel`` (Conv3d patches with bias, a learned position table of
  ``num_position_embeddings`` rows, LayerNorm blocks with a GELU MLP, the 2×2 patch merger, and
  Qwen3-VL's DeepStack mergers, one per ``deepstack_visual_indexes`` entry).
- GLM-4.1V / GLM-4.5V / GLM-4.6V (GLM-V Team 2025; ``Glm4vForConditionalGeneration``,
  ``Glm46VForConditionalGeneration``, ``Glm4vMoeForConditionalGeneration``) and GLM-OCR
  (``GlmOcrForConditionalGeneration``): a GLM-4 / GLM-4-MoE text decoder and the tower
  ``Glm4vVisionModel`` (a learned position table of (image_size/P)² rows, RMSNorm blocks with a
  SwiGLU MLP of out_hidden_size, a 2×2 strided-conv downsample, and a SwiGLU patch merger of
  intermediate_size) or ``GlmOcrVisionModel`` (no position table, biases, per-head Q/K RMSNorms,
  a merger of out_hidden_size·in_channels).

Images per sequence are the size N_img, read as 0: the cost of an image through these towers is
not modelled (N_img > 0 is refused in one line).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .deepseek import FAMILIES as _DEEPSEEK, READERS as _DEEPSEEK_READERS
from .ernie4_5 import FAMILIES as _ERNIE4_5, READERS as _ERNIE4_5_READERS
from .ernie4_5_moe import READERS as _ERNIE4_5_MOE_READERS
from .glm4_moe import FAMILIES as _GLM4_MOE, READERS as _GLM4_MOE_READERS
from .minimax_m3 import READERS as _MINIMAX_M3_READERS
from .step3p5_text import TEXT_READERS as _STEP3P5_READERS
from .unlimited_ocr_text import TEXT_READERS as _UNLIMITED_OCR_READERS
from .olmo import FAMILIES as _OLMO, READERS as _OLMO_READERS
from .persimmon import READERS as _PERSIMMON_READERS
from .qwen2 import FAMILIES as _QWEN2, READERS as _QWEN2_READERS
from .qwen3 import FAMILIES as _QWEN3_FAMILIES, READERS as _QWEN3_READERS
from .qwen3_next import FAMILIES as _QWEN3_NEXT, READERS as _QWEN3_NEXT_READERS
from .qwen_moe import FAMILIES as _QWEN_MOE, READERS as _QWEN_MOE_READERS
from .stablelm import FAMILIES as _STABLELM, READERS as _STABLELM_READERS
from .base import Extended, Family
from .fields import Fields, Reader, note_leftovers, sub_fields

BUILD = Ref("symgpt.families.blocks.vlm_towers", "build")

TOWER_SIZES = ("d_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img")
TOWER_FLAGS = {"tower": "qwen3_vl", "tower_temporal_patch": 2, "tower_merge": 2, "tower_out": 3584,
               "tower_positions": None, "tower_deepstack": None, "tower_bias": False, "tower_heads": 16,
               "tower_merger_ff": None, "tower_projector": "merge",
               "tower_kv_heads": None,
               # a held audio encoder beside the tower (Qwen2.5-Omni's thinker)
               "audio_layers": None, "audio_d": None, "audio_ff": None, "audio_mels": None, "audio_conv": None}
TOWER_HELP = {
    "tower": "the held vision tower: qwen3_vl (Qwen3VLVisionModel), glm4v (Glm4vVisionModel) or glm_ocr "
             "(GlmOcrVisionModel)",
    "tower_temporal_patch": "frames per patch of the tower's Conv3d (temporal_patch_size)",
    "tower_merge": "the side m of the patch merger's m × m merge (spatial_merge_size)",
    "tower_out": "the tower's output width (out_hidden_size)",
    "tower_positions": "rows of the tower's learned position table (none: no table)",
    "tower_deepstack": "Qwen3-VL's DeepStack mergers (one per deepstack_visual_indexes entry)",
    "tower_bias": "the tower's attention projections have biases (glm towers: attention_bias)",
    "tower_heads": "the tower's attention heads (num_heads: the width of GLM-OCR's Q/K norms)",
    "tower_merger_ff": "the width of the glm towers' SwiGLU patch merger",
    "tower_projector": "the siglip tower's projector: merge (LayerNorm, m²·d_v -> m²·d_v -> d) or mlp2 "
                       "(d_v -> d -> d, VideoLLaMA 3)",
    "tower_kv_heads": "the qwen2_5_vl tower's key/value heads (num_key_value_heads; none: tower_heads)",
    "audio_layers": "layers of a held Whisper-style audio encoder (encoder_layers; none: no audio encoder)",
    "audio_d": "the audio encoder's width (d_model)",
    "audio_ff": "the audio encoder's MLP width (encoder_ffn_dim)",
    "audio_mels": "the audio encoder's mel bins (num_mel_bins)",
    "audio_conv": "Qwen3-Omni's audio encoder: the channels of its three strided Conv2d (downsample_hidden_size; "
                  "none: Qwen2.5-Omni's two Conv1d)",
}
TOWER_CHOICES = {"tower": ("qwen3_vl", "glm4v", "glm_ocr", "siglip", "qwen2_5_vl"), "tower_projector": ("merge", "mlp2")}


def _extend(table: Extended, added: dict) -> Extended:
    """A text family's table (flags, help or choices) with the tower's keys added after it."""
    return Extended(table.base, table.changes, {**table.added, **added})


def _family(name: str, description: str, text: Family, tower: str, **defaults) -> Family:
    return Family(name=name, description=description,
                  flags=_extend(text.flags, {**TOWER_FLAGS, "tower": tower, **defaults}),
                  sizes=tuple(text.sizes) + TOWER_SIZES, optional=tuple(text.optional),
                  build=partial(BUILD, name=name, text=text.build),
                  flag_help=_extend(text.flag_help, TOWER_HELP), choices=_extend(text.choices, TOWER_CHOICES))


def _text(families: tuple, name: str) -> Family:
    return next(f for f in families if f.name == name)


_HELD = " (held: a forward over token ids runs none of it)"
_QWEN3 = dict(tower_positions=2304, tower_out=3584, tower_heads=16)
_GLM4V = dict(tower_positions=576, tower_out=4096, tower_heads=12, tower_merger_ff=13696)
FAMILIES = (
    _family("qwen3_vl", "Qwen3-VL: a Qwen3 decoder with a vision tower and DeepStack mergers" + _HELD,
            _text(_QWEN3_FAMILIES, "qwen3"), "qwen3_vl", tower_deepstack=3, **_QWEN3),
    _family("qwen3_vl_moe", "Qwen3-VL-MoE: a Qwen3-MoE decoder with Qwen3-VL's vision tower" + _HELD,
            _text(_QWEN_MOE, "qwen3_moe"), "qwen3_vl", tower_deepstack=3, **_QWEN3),
    _family("qwen3_5_vl", "Qwen3.5: a Gated DeltaNet hybrid decoder with Qwen3-VL's vision tower" + _HELD,
            _text(_QWEN3_NEXT, "qwen3_5"), "qwen3_vl", **_QWEN3),
    _family("qwen3_5_moe_vl", "Qwen3.5-MoE: a Gated DeltaNet hybrid MoE decoder with Qwen3-VL's vision tower" + _HELD,
            _text(_QWEN3_NEXT, "qwen3_5_moe"), "qwen3_vl", **_QWEN3),
    _family("glm4v", "GLM-4.1V / GLM-4.6V: a GLM-4 decoder with a vision tower" + _HELD, _text(_STABLELM, "glm4"),
            "glm4v", **_GLM4V),
    _family("glm4v_moe", "GLM-4.5V: a GLM-4-MoE decoder with GLM-4.1V's vision tower" + _HELD,
            _text(_GLM4_MOE, "glm4_moe"), "glm4v", **_GLM4V),
    _family("glm_ocr", "GLM-OCR: a GLM-4 decoder with a vision tower with Q/K norms" + _HELD, _text(_STABLELM, "glm4"),
            "glm_ocr", tower_out=1536, tower_heads=16, tower_merger_ff=4608, tower_bias=True),
    _family("exaone4_5", "EXAONE 4.5: an EXAONE 4.0 decoder with a Qwen2.5-VL-style tower (grouped-query "
            "attention)" + _HELD, _text(_OLMO, "exaone4"), "qwen2_5_vl", tower_out=3584, tower_kv_heads=8),
    _family("qwen2_5_omni_thinker", "Qwen2.5-Omni thinker: a Qwen2 decoder with Qwen2.5-VL's tower and a "
            "Whisper-style audio encoder" + _HELD, _text(_QWEN2, "qwen2"), "qwen2_5_vl", tower_out=3584,
            audio_layers=32, audio_d=1280, audio_ff=5120, audio_mels=128),
    _family("qwen3_omni_moe_thinker", "Qwen3-Omni-MoE thinker: a Qwen3-MoE decoder with Qwen3-VL's tower and a "
            "Whisper-style audio encoder behind strided convolutions" + _HELD, _text(_QWEN_MOE, "qwen3_moe"),
            "qwen3_vl", tower_deepstack=3, audio_layers=32, audio_d=1280, audio_ff=5120, audio_mels=128,
            audio_conv=480, **_QWEN3),
    _family("video_llama_3", "VideoLLaMA 3: a Qwen2 decoder with a SigLIP-style tower and a 2-layer projector"
            + _HELD, _text(_QWEN2, "qwen2"), "siglip", tower_temporal_patch=1, tower_projector="mlp2"),
    _family("paddleocr_vl", "PaddleOCR-VL: an ERNIE 4.5 decoder with a SigLIP-style tower and a 2×2 merging "
            "projector" + _HELD, _text(_ERNIE4_5, "ernie4_5"), "siglip", tower_temporal_patch=1, tower_positions=729),
    _family("kimi_k25", "Kimi K2.5: a DeepSeek-V3 decoder with the MoonViT tower and a 2×2 merging projector"
            + _HELD, _text(_DEEPSEEK, "deepseek_v3"), "siglip", tower_temporal_patch=1, tower_positions=4096),
)
#: the text decoders' readers, model_type -> Reader
_TEXT_READERS = {**_OLMO_READERS, **_QWEN2_READERS, **_ERNIE4_5_READERS, **_DEEPSEEK_READERS, **_QWEN3_READERS, **_QWEN_MOE_READERS, **_QWEN3_NEXT_READERS, **_STABLELM_READERS,
                 **_GLM4_MOE_READERS, **_PERSIMMON_READERS}
# more text decoders beside a held tower (vlm_held_moe.py): MiniMax-M3, Step 3.5, ERNIE 4.5 MoE, Unlimited-OCR
_TEXT_READERS.update({**_MINIMAX_M3_READERS, **_STEP3P5_READERS, **_ERNIE4_5_MOE_READERS,
                      **_UNLIMITED_OCR_READERS})

_NOT_RUN = ("the forward counted is over token ids, without images, video or audio: transformers does not run the "
            "vision tower (nor an audio encoder), whose parameters are counted. The cost of an image is not "
            "modelled for this model")
_TOKENS = ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id", "image_start_token_id",
           "image_end_token_id", "video_start_token_id", "video_end_token_id")


def _read(f: Fields, family: str, text_family: str, tower, text_changes=None, text_type=None, top=None,
          tie=(False, False)):
    """A text_config read by *text_family*'s reader, a vision_config read by *tower*. The head's
    tying is the top level's tie_word_embeddings (default ``tie[0]``, the composite config class's),
    or, where the class forwards an older save's text_config value (``tie[1]``), either of them."""
    nested = sub_fields(f, "text_config")
    text_tie = nested.cfg.get("tie_word_embeddings", False)
    cfg = {k: v for k, v in nested.cfg.items() if k != "tie_word_embeddings"}
    cfg.update(text_changes(cfg) if text_changes else {})
    text = Fields(cfg, nested.where)
    got, flags, sizes = _TEXT_READERS[text_type or text_family].read(text)
    if got != text_family:
        raise SymgptError(f"{f.where}: its text_config reads as a {got!r} decoder; {family} is modelled with a "
                          f"{text_family!r} one")
    note_leftovers(f, text, "text_config")
    flags["tied"] = f.bool("tie_word_embeddings", tie[0]) or (tie[1] and text_tie is True)
    v = sub_fields(f, "vision_config")
    for key in ("patch_size", "temporal_patch_size", "spatial_merge_size"):
        if isinstance(v.cfg.get(key), list):
            raise SymgptError(f"{f.where}: vision_config {key} given as a list is not modelled")
    tower(v, flags, sizes)
    v.silent("hidden_act", "initializer_range", "rope_parameters", "model_type", "attention_dropout", "rms_norm_eps",
             "id2label", "label2id")
    note_leftovers(f, v, "vision_config")
    audio = top(f) if top is not None else None  # the audio encoder's flags, where there is one
    if audio is not None:
        if "out" in audio and audio.pop("out") != flags["tower_out"]:
            raise SymgptError(f"{f.where}: an audio output_dim other than the vision out_hidden_size is not modelled")
        flags.update(audio)
    f.silent(*_TOKENS)
    f.notes.append(_NOT_RUN)
    sizes["N_img"] = 0
    return family, flags, sizes


def _vision_common(v: Fields, sizes: dict, flags: dict, D: dict) -> None:
    sizes.update(d_v=v.int("hidden_size", D["d_v"]), L_v=v.int("depth", D["L_v"]), P_patch=v.int("patch_size", D["P"]),
                 C_img=v.int("in_channels", 3))
    flags.update(tower_temporal_patch=v.int("temporal_patch_size", 2), tower_merge=v.int("spatial_merge_size", 2),
                 tower_out=v.int("out_hidden_size", D["out"]), tower_heads=v.int("num_heads", D["heads"]))


def _qwen3_tower(deepstack_default):
    def read(v: Fields, flags: dict, sizes: dict) -> None:
        """Qwen3VLVisionConfig (Qwen3_5VisionConfig has no deepstack_visual_indexes)."""
        _vision_common(v, sizes, flags, dict(d_v=1152, L_v=27, P=16, out=3584, heads=16))
        sizes["d_ff_v"] = v.int("intermediate_size", 4304)
        flags["tower_positions"] = v.int("num_position_embeddings", 2304)
        deep, _ = v.get("deepstack_visual_indexes", deepstack_default)
        if not isinstance(deep, list):
            raise SymgptError(f"{v.where}: field 'deepstack_visual_indexes' must be a list")
        flags["tower_deepstack"] = len(deep) or None
    return read


def _glm_tower(ocr: bool):
    def read(v: Fields, flags: dict, sizes: dict) -> None:
        """Glm4vVisionConfig (the block MLP is out_hidden_size wide, the merger intermediate_size) or
        GlmOcrVisionConfig (the block MLP intermediate_size, the merger out_hidden_size·in_channels)."""
        D = dict(d_v=1024, L_v=24, P=14, out=1536, heads=16) if ocr else dict(d_v=1536, L_v=24, P=14, out=4096, heads=12)
        _vision_common(v, sizes, flags, D)
        ff = v.int("intermediate_size", 4096 if ocr else 13696)
        side = v.int("image_size", 336) // sizes["P_patch"]
        flags["tower_bias"] = v.bool("attention_bias", ocr)
        if ocr:
            sizes["d_ff_v"], flags["tower_merger_ff"], flags["tower_positions"] = ff, flags["tower_out"] * sizes["C_img"], None
            if sizes["d_v"] % flags["tower_heads"]:
                raise SymgptError(f"{v.where}: hidden_size must be a multiple of num_heads")
        else:
            sizes["d_ff_v"], flags["tower_merger_ff"], flags["tower_positions"] = flags["tower_out"], ff, side * side
    return read


def _siglip_tower(kind: str):
    def read(v: Fields, flags: dict, sizes: dict) -> None:
        """A SigLIP-style tower (LayerNorm blocks, separate Q/K/V, a GELU MLP, a final LayerNorm):
        VideoLlama3VisionConfig (no position table), PaddleOCRVisionConfig ((image_size/P)² rows),
        Kimi_K25VisionConfig (pos_emb_height × pos_emb_width rows)."""
        sizes.update(d_v=v.int("hidden_size", 1152), L_v=v.int("num_hidden_layers", 27),
                     d_ff_v=v.int("intermediate_size", 4304), P_patch=v.int("patch_size", 14),
                     C_img=v.int("num_channels", 3) if kind != "kimi" else 3)
        flags.update(tower_temporal_patch=1, tower_heads=v.int("num_attention_heads", 16))
        v.silent("layer_norm_eps")
        if kind == "video_llama_3":
            flags.update(tower_positions=None, tower_projector="mlp2")
        elif kind == "cosmos3_edge":  # Cosmos3EdgeVisionConfig: a table of num_patches rows
            flags.update(tower_positions=v.int("num_patches", 256), tower_merge=v.int("spatial_merge_size", 2),
                         tower_projector="merge")
        elif kind == "paddleocr":
            side = v.int("image_size", 384) // sizes["P_patch"]
            flags.update(tower_positions=side * side, tower_merge=v.int("spatial_merge_size", 2), tower_projector="merge")
        else:
            flags.update(tower_positions=v.int("pos_emb_height", 64) * v.int("pos_emb_width", 64), tower_projector="merge")
            v.int("pos_emb_time", 4)  # a fixed sinusoidal table over frames: no parameters
            merge, _ = v.get("merge_kernel_size", [2, 2])
            if not (isinstance(merge, list) and len(merge) == 2 and merge[0] == merge[1] and isinstance(merge[0], int)
                    and merge[0] >= 1):
                raise SymgptError(f"{v.where}: merge_kernel_size other than a square [m, m] is not modelled")
            flags["tower_merge"] = merge[0]
    return read


def _qwen2_5_tower(v: Fields, flags: dict, sizes: dict) -> None:
    """Exaone4_5_VisionConfig: Qwen2.5-VL's tower with num_key_value_heads (window_size and
    fullatt_block_indexes change no count)."""
    _vision_common(v, sizes, flags, dict(d_v=3584, L_v=32, P=14, out=3584, heads=16))
    sizes["d_ff_v"] = v.int("intermediate_size", 3420)
    flags["tower_kv_heads"] = v.int("num_key_value_heads", 8)
    if sizes["d_v"] % flags["tower_heads"] or flags["tower_heads"] % flags["tower_kv_heads"]:
        raise SymgptError(f"{v.where}: hidden_size must be a multiple of num_heads, num_heads of num_key_value_heads")
    v.silent("in_chans", "spatial_patch_size", "tokens_per_second", "window_size", "fullatt_block_indexes")


def _omni_vision(v: Fields, flags: dict, sizes: dict) -> None:
    """Qwen2_5OmniVisionEncoderConfig: Qwen2.5-VL's tower (separate q, k, v: the counts of a fused
    qkv)."""
    _vision_common(v, sizes, flags, dict(d_v=3584, L_v=32, P=14, out=3584, heads=16))
    sizes["d_ff_v"] = v.int("intermediate_size", 3420)
    flags["tower_kv_heads"] = None
    v.silent("window_size", "fullatt_block_indexes")


def _omni_audio(f: Fields, v3: bool = False) -> dict:
    """Qwen2_5OmniAudioEncoderConfig: two Conv1d of kernel 3, encoder_layers Whisper layers (no key
    bias), ln_post, a projection to output_dim and two learned audio begin/end vectors of it.
    Qwen3OmniMoeAudioEncoderConfig (*v3*): three strided Conv2d of downsample_hidden_size channels and
    conv_out, Whisper layers with a key bias, ln_post, proj1 and proj2."""
    a = sub_fields(f, "audio_config")
    audio = dict(audio_layers=a.int("encoder_layers", 32), audio_d=a.int("d_model", 1280),
                 audio_ff=a.int("encoder_ffn_dim", 5120), audio_mels=a.int("num_mel_bins", 128),
                 out=a.int("output_dim", 3584), audio_conv=a.int("downsample_hidden_size", 480) if v3 else None)
    a.silent("conv_chunksize", "n_window_infer")
    a.int("encoder_attention_heads", 20)
    a.silent("activation_function", "activation_dropout", "attention_dropout", "dropout", "max_source_positions",
             "n_window", "scale_embedding", "initializer_range", "model_type", "id2label", "label2id")
    note_leftovers(f, a, "audio_config")
    f.silent("audio_token_index", "image_token_index", "video_token_index", "audio_start_token_id", "audio_token_id",
             "audio_end_token_id", "user_token_id", "position_id_per_seconds", "seconds_per_chunk",
             "initializer_range")
    return audio


def _qwen3_omni_text(cfg: dict) -> dict:
    # Qwen3OmniMoeThinkerTextAttention: head_dim hidden_size // num_attention_heads where absent
    d, h = cfg.get("hidden_size", 2048), cfg.get("num_attention_heads", 28)
    if "head_dim" in cfg:
        return {}
    if not isinstance(d, int) or not isinstance(h, int) or h < 1:
        raise SymgptError("text_config: hidden_size and num_attention_heads must be integers")
    return {"head_dim": d // h}


def _kimi_top(f: Fields) -> None:
    width = f.int("projection_hidden_size", 1152)
    f.silent("projection_layer_norm_eps")
    d_v = f.cfg.get("vision_config", {}).get("hidden_size", 1152) if isinstance(f.cfg.get("vision_config"), dict) else 1152
    if width != d_v:
        raise SymgptError(f"{f.where}: projection_hidden_size other than the vision hidden_size is not modelled")


def _qwen3_vl_moe_text(cfg: dict) -> dict:
    # Qwen3VLMoeTextConfig keeps the expert count as num_experts (num_local_experts in its JSON)
    return {"num_experts": cfg["num_local_experts"]} if "num_local_experts" in cfg else {}


def _glm_text(bias: bool):
    def changes(cfg: dict) -> dict:
        """Glm4vTextAttention / GlmOcrTextAttention: head_dim hidden_size / num_attention_heads (the
        text config has no head_dim), Q/K/V biases fixed by the class (GLM-4V: on, GLM-OCR: off)."""
        d, h = cfg.get("hidden_size", 4096 if bias else 1024), cfg.get("num_attention_heads", 32 if bias else 16)
        if not isinstance(d, int) or not isinstance(h, int) or h < 1 or d % h:
            raise SymgptError("text_config: hidden_size must be a multiple of num_attention_heads")
        return {"head_dim": d // h, "attention_bias": bias}
    return changes


def _reader(family, text_family, tower, architecture, text_changes=None, text_type=None, top=None,
            tie=(False, False)) -> Reader:
    return Reader(partial(_read, family=family, text_family=text_family, tower=tower, text_changes=text_changes,
                          text_type=text_type, top=top, tie=tie), (architecture,))


_FORWARDS = (False, True)  # the class forwards text_config's tie_word_embeddings (GLM-4V, GLM-OCR, ...)


READERS = {
    "qwen3_vl": _reader("qwen3_vl", "qwen3", _qwen3_tower([8, 16, 24]), "Qwen3VLForConditionalGeneration"),
    "qwen3_vl_moe": _reader("qwen3_vl_moe", "qwen3_moe", _qwen3_tower([8, 16, 24]),
                            "Qwen3VLMoeForConditionalGeneration", _qwen3_vl_moe_text),
    "qwen3_5": _reader("qwen3_5_vl", "qwen3_5", _qwen3_tower([]), "Qwen3_5ForConditionalGeneration",
                       text_type="qwen3_5_text"),
    "qwen3_5_moe": _reader("qwen3_5_moe_vl", "qwen3_5_moe", _qwen3_tower([]), "Qwen3_5MoeForConditionalGeneration",
                           text_type="qwen3_5_moe_text"),
    "glm4v": _reader("glm4v", "glm4", _glm_tower(False), "Glm4vForConditionalGeneration", _glm_text(True),
                     tie=_FORWARDS),
    "glm46v": _reader("glm4v", "glm4", _glm_tower(False), "Glm46VForConditionalGeneration", _glm_text(True)),
    "glmga": _reader("glm4v", "glm4", _glm_tower(False), "Glm46VForConditionalGeneration", _glm_text(True)),
    "glm4v_moe": _reader("glm4v_moe", "glm4_moe", _glm_tower(False), "Glm4vMoeForConditionalGeneration",
                         tie=_FORWARDS),
    "glm_ocr": _reader("glm_ocr", "glm4", _glm_tower(True), "GlmOcrForConditionalGeneration", _glm_text(False),
                       tie=_FORWARDS),
    "exaone4_5": _reader("exaone4_5", "exaone4", _qwen2_5_tower, "Exaone4_5_ForConditionalGeneration"),
    "qwen2_5_omni_thinker": _reader("qwen2_5_omni_thinker", "qwen2", _omni_vision,
                                    "Qwen2_5OmniThinkerForConditionalGeneration", top=_omni_audio),
    "qwen3_omni_moe_thinker": _reader("qwen3_omni_moe_thinker", "qwen3_moe", _qwen3_tower([8, 16, 24]),
                                      "Qwen3OmniMoeThinkerForConditionalGeneration", _qwen3_omni_text,
                                      top=partial(_omni_audio, v3=True)),
    "video_llama_3": _reader("video_llama_3", "qwen2", _siglip_tower("video_llama_3"),
                             "VideoLlama3ForConditionalGeneration", tie=_FORWARDS),
    "paddleocr_vl": _reader("paddleocr_vl", "ernie4_5", _siglip_tower("paddleocr"), "PaddleOCRVLForConditionalGeneration",
                            tie=(True, True)),
    "kimi_k25": _reader("kimi_k25", "deepseek_v3", _siglip_tower("kimi"), "Kimi_K25ForConditionalGeneration",
                        top=_kimi_top, tie=(True, False)),
}

PRESETS: tuple = ()
