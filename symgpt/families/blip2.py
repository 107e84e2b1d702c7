"""BLIP-2 (Li et al. 2023; transformers' ``Blip2ForConditionalGeneration``) with an OPT language
model: a ViT-g-style vision model, a Q-Former of learned queries and a linear projection beside
OPT's decoder (``blocks/blip2.py`` builds it).

Images per sequence are the size N_img: a config is read with N_img = 0 (text only); ``--set
N_img=1`` counts one image, whose n_q query outputs (``num_query_tokens``) T must count. A T5
language model (``use_decoder_only_language_model`` false) is refused.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_ACTS = ("gelu", "gelu_tanh", "relu", "silu")
#: OPT's defaults (families/opt.py) on the generic decoder's
OPT_CHANGES = dict(norm="layernorm", ffn="mlp", activation="relu", positions="learned", pos_offset=2, qkv_bias=True,
                   proj_bias=True, mlp_bias=True, tied=True)
BLIP2_FLAGS = {"vision_activation": "gelu", "qformer_d": 768, "qformer_h": 12, "qformer_layers": 12,
               "qformer_d_ff": 3072, "qformer_activation": "gelu", "cross_every": 2, "queries": 32,
               "qformer_text": False, "qformer_vocab": 30522, "qformer_positions": 512}
BLIP2_HELP = {"vision_activation": "the vision model's MLP activation",
              "qformer_d": "the Q-Former's width (qformer_config.hidden_size)",
              "qformer_h": "the Q-Former's attention heads", "qformer_layers": "the Q-Former's layers",
              "qformer_d_ff": "the Q-Former's query FFN width (intermediate_size)",
              "qformer_activation": "the Q-Former's FFN activation",
              "cross_every": "a Q-Former layer attends to the image features every this many layers, from the first "
                             "(cross_attention_frequency)",
              "queries": "learned query tokens, the image tokens the decoder sees per image (num_query_tokens)",
              "qformer_text": "the Q-Former embeds an instruction's tokens (InstructBLIP): held, images refused",
              "qformer_vocab": "rows of the Q-Former's word embeddings (InstructBLIP)",
              "qformer_positions": "rows of the Q-Former's position embeddings (InstructBLIP)"}
VISION_SIZES = ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img")

def _family(name, description, **flags):
    return Family(name=name, description=description, flags=Extended(FLAGS, OPT_CHANGES, {**BLIP2_FLAGS, **flags}),
                  sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                  build=partial(Ref("symgpt.families.blocks.blip2", "build"), name=name),
                  flag_help=Extended(FLAG_HELP, added=BLIP2_HELP),
                  choices=Extended(CHOICES, added={"vision_activation": _ACTS, "qformer_activation": _ACTS}))


FAMILIES = (
    _family("blip-2", "BLIP-2: a ViT vision model, a Q-Former of learned queries and a projection beside OPT's decoder"),
    _family("instructblip", "InstructBLIP: BLIP-2 whose Q-Former also reads the instruction (held; images refused)",
            qformer_text=True),
    _family("instructblipvideo", "InstructBLIP-Video: InstructBLIP over video frames (Q-Former text held; "
            "images refused)", qformer_text=True),
)

_SILENT = ("attention_dropout", "attention_probs_dropout_prob", "hidden_dropout_prob", "initializer_range",
           "layer_norm_eps", "id2label", "label2id", "chunk_size_feed_forward", "is_decoder", "is_encoder_decoder",
           "pad_token_id", "architectures")


def read_vision(f: Fields, v: Fields, sizes: dict, flags: dict) -> None:
    sizes.update(d_v=v.int("hidden_size", 1408), h_v=v.int("num_attention_heads", 16),
                 L_v=v.int("num_hidden_layers", 39), d_ff_v=v.int("intermediate_size", 6144),
                 S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 14), C_img=v.int("num_channels", 3),
                 N_img=0)
    if not v.bool("qkv_bias", True):
        raise SymgptError(f"{f.where}: a BLIP-2 vision model without Q/V biases (qkv_bias false) is not modelled")
    flags["vision_activation"] = v.activation("hidden_act", "gelu")
    v.silent(*_SILENT)


def read_qformer(f: Fields, q: Fields, sizes: dict, flags: dict) -> None:
    flags.update(qformer_d=q.int("hidden_size", 768), qformer_h=q.int("num_attention_heads", 12),
                 qformer_layers=q.int("num_hidden_layers", 12), qformer_d_ff=q.int("intermediate_size", 3072),
                 qformer_activation=q.activation("hidden_act", "gelu"),
                 cross_every=q.int("cross_attention_frequency", 2), queries=f.int("num_query_tokens", 32))
    if q.int("encoder_hidden_size", 1408) != sizes["d_v"]:
        raise SymgptError(f"{f.where}: a Q-Former whose encoder_hidden_size differs from the vision width is "
                          "not modelled")
    if flags["qformer_layers"] % flags["cross_every"]:
        raise SymgptError(f"{f.where}: Q-Former layers ({flags['qformer_layers']}) not a multiple of "
                          f"cross_attention_frequency ({flags['cross_every']}) are not modelled")
    if q.bool("use_qformer_text_input", False):
        raise SymgptError(f"{f.where}: a Q-Former with text input (use_qformer_text_input) is not modelled")
    if flags["qformer_text"]:
        flags.update(qformer_vocab=q.int("vocab_size", 30522), qformer_positions=q.int("max_position_embeddings", 512))
        if q.str("position_embedding_type", "absolute") != "absolute":
            raise SymgptError(f"{f.where}: a Q-Former position_embedding_type other than absolute is not modelled")
    for name in ("vision_activation", "qformer_activation"):
        if flags[name] not in _ACTS:
            raise SymgptError(f"{f.where}: activation {flags[name]!r} is not modelled here")
    q.silent("vocab_size", "max_position_embeddings", "position_embedding_type", *_SILENT)


def read(f: Fields, name="blip-2"):
    """transformers' Blip2Config (and InstructBlipConfig, InstructBlipVideoConfig): vision_config,
    qformer_config, text_config (OPTConfig)."""
    from .opt import read as read_opt

    if not f.bool("use_decoder_only_language_model", True):
        raise SymgptError(f"{f.where}: BLIP-2 with an encoder--decoder (T5) language model is not modelled")
    t = sub_fields(f, "text_config")
    mt = t.cfg.get("model_type", "opt")
    if mt != "opt":
        raise SymgptError(f"{f.where}: a BLIP-2 text_config of model_type {str(mt)[:40]!r} is not modelled (OPT only)")
    _, flags, sizes = read_opt(t)
    note_leftovers(f, t, "text_config")
    v, q = sub_fields(f, "vision_config"), sub_fields(f, "qformer_config")
    read_vision(f, v, sizes, flags)
    flags["qformer_text"] = name != "blip-2"
    read_qformer(f, q, sizes, flags)
    note_leftovers(f, v, "vision_config")
    note_leftovers(f, q, "qformer_config")
    f.silent("image_text_hidden_size", "image_token_index", "video_token_index", "initializer_factor", "initializer_range",
             "is_encoder_decoder", "id2label", "label2id", "tie_word_embeddings")
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=1 counts one), each read at "
                   f"{sizes['S_img']} x {sizes['S_img']} pixels; each gives {flags['queries']} query outputs that "
                   "take the places of image tokens: T counts them")
    if name != "blip-2":
        f.notes.append("InstructBLIP: the Q-Former's instruction embeddings and FFN are counted and held; images "
                       "are not modelled (N_img must be 0): the OPT decoder alone is costed")
    return name, flags, sizes


READERS = {"blip-2": Reader(read, ("Blip2ForConditionalGeneration",)),
           "instructblip": Reader(partial(read, name="instructblip"), ("InstructBlipForConditionalGeneration",)),
           "instructblipvideo": Reader(partial(read, name="instructblipvideo"),
                                       ("InstructBlipVideoForConditionalGeneration",))}

PRESETS: tuple = ()
