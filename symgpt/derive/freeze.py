"""Training a vision--language or speech--language model with parts of it frozen: the vision
tower, the audio tower, the projector that maps a tower's features to the text width, or the
language model itself.

:class:`Freeze` names the parts; :func:`apply` returns the model with every parameter of those
parts marked frozen, as ``module.requires_grad_(False)`` leaves it in PyTorch. The derivations
that walk the graph (``derive.walk``) then apply PyTorch's autograd rule:

* a frozen parameter gets no gradient and no optimizer state (``memory.gradients``,
  ``memory.optimizer`` count the trainable parameters only);
* a tensor needs a gradient only when some input of the op that made it does, or the op owns a
  trainable parameter. A frozen tower reads ``pixel_values`` (or audio features), which need no
  gradient, and owns nothing trainable, so autograd records nothing in it: the tower saves no
  activations and has no backward FLOPs (no weight-gradient and no input-gradient matmuls);
* under full recomputation a frozen stack keeps no checkpointed input (nothing in it is recorded);
* a trained projector above a frozen tower keeps its input for its weight gradient and computes
  no gradient of that input; a frozen projector under a trained language model records nothing
  either;
* a frozen language model above a trained projector (LLaVA's first stage, Liu et al. 2023
  Sec. 4.2) still carries the gradient down to the image features: its linear layers compute
  input gradients and keep no input for weight gradients.

The parts are found by the module names transformers gives them (the node paths of symgpt's
graphs follow them), listed in ``TOWERS`` and ``PROJECTORS`` with the classes that use each.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import SymgptError
from ..core.symbols import N_aud, N_img
from ..graph.arch import Arch, Constraint
from ..graph.digraph import DiGraph
from .quantity import evaluate

PARTS = ("vision", "audio", "projector", "language")

#: tower kind -> the module names of its towers (transformers 5.24.0, ``modeling_<type>.py``)
TOWERS = {
    "vision": (
        "vision_tower",  # LlavaModel, LlavaNext, LlavaOnevision, VipLlava, Gemma3, PaliGemma, Mistral3,
                         # InternVL, Aria, Cohere2Vision, Lfm2Vl, GotOcr2, MiniCPM-V, Florence2, Kosmos-2
        "vision_model",  # Idefics2/3, SmolVLM, BLIP, BLIP-2, InstructBLIP, DeepseekVL, Llama4, Mllama
        "visual",        # Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4V, PaddleOCR-VL, VideoLlama3, Kimi-K2.5
        "image_tower", "video_tower",  # VideoLlava
        "vision_encoder",  # LightOnOcr
        "high_res_vision_model",  # DeepseekVLHybrid's SAM encoder
    ),
    "audio": ("audio_tower",),  # Voxtral, Qwen2-Audio, Qwen3-ASR, Qwen2.5-Omni and Qwen3-Omni thinkers
}
#: a family whose tower has a module name that other families use for something else
FAMILY_TOWERS = {"granite_speech": {"audio": ("encoder",)}, "granite_speech_plus": {"audio": ("encoder",)}}
#: the modules that map a tower's features to the text width (matched before the towers: a Qwen
#: vision transformer holds its PatchMerger as ``visual.merger``)
PROJECTORS = (
    "multi_modal_projector",  # LLaVA family, Gemma3, PaliGemma, Mistral3, InternVL, Voxtral, Qwen3-ASR
    "connector",  # Idefics2/3, SmolVLM
    "aligner",  # DeepseekVL
    "high_res_vision_neck", "high_res_vision_proj", "high_res_vision_alpha",  # DeepseekVLHybrid
    "qformer", "query_tokens", "language_projection",  # BLIP-2, InstructBLIP: the Q-Former bridges the towers
    "image_to_text_projection",  # Kosmos-2
    "vision_projection",  # LightOnOcr
    "vision_embed_tokens",  # Fuyu: patches projected straight to the text width (no tower)
    "projector",  # GraniteSpeech, PaddleOCR-VL, VideoLlama3, Kimi-K2.5, HyperCLOVA X
    "merger",  # MiniCPM-V's resampler
    "visual/merger", "visual/deepstack_merger_list",  # Qwen2-VL .. Qwen3-VL, GLM-4V PatchMerger
)
#: a container module some classes hold everything under (Florence2's ``model``)
_CONTAINER = "model/"


def _match(path: str, names) -> str | None:
    """The name of *names* whose module holds *path* (None when none does)."""
    if path.startswith(_CONTAINER):
        path = path[len(_CONTAINER):]
    return next((n for n in names if path == n or path.startswith(n + "/")), None)


def _under(path: str, names) -> bool:
    return _match(path, names) is not None


def in_tower(path: str) -> bool:
    """Whether the node at *path* lies in a vision or audio tower (by the module names of ``TOWERS``)."""
    return _under(path, TOWERS["vision"] + TOWERS["audio"])


@dataclass(frozen=True)
class Freeze:
    """The parts held frozen: names of ``PARTS``."""

    parts: tuple = ("vision",)

    def __post_init__(self):
        parts = tuple(dict.fromkeys(self.parts))
        for p in parts:
            if p not in PARTS:
                raise SymgptError(f"--freeze takes {', '.join(PARTS)} (separated by commas), got {p!r}")
        if not parts:
            raise SymgptError(f"--freeze needs at least one of {', '.join(PARTS)}")
        object.__setattr__(self, "parts", parts)

    @classmethod
    def parse(cls, text: str) -> "Freeze":
        names = tuple(t.strip() for t in text.split(","))
        if any(not t for t in names):
            raise SymgptError(f"--freeze takes names separated by commas, got {text!r}")
        return cls(names)

    def describe(self, modules: dict) -> str:
        """The rule as the answers' notes state it; *modules*: part -> the module names frozen."""
        named = "; ".join(f"{p}: {', '.join(m)}" for p, m in modules.items())
        towers = [p for p in ("vision", "audio") if p in self.parts]
        rule = ("frozen (requires_grad_(False)): " + named + "; a frozen parameter gets no gradient and no "
                "optimizer state; a tensor needs a gradient only when an input of the op that made it does or "
                "the op owns a trainable parameter (PyTorch's autograd)")
        if towers:
            inputs = " and ".join({"vision": "pixel_values", "audio": "input_features"}[t] for t in towers)
            rule += (f"; the frozen {' and '.join(towers)} tower reads {inputs}, which need no gradient, so "
                     "autograd records nothing in it: it saves no activations and has no backward FLOPs (no "
                     "weight- or input-gradient matmuls), and under full recomputation keeps no checkpointed "
                     "layer inputs (transformers' activation_checkpointing_enable hooks every sub-model's input "
                     "embeddings to require grad, the tower's patch embedding too, which puts a frozen tower back "
                     "under autograd: model.disable_input_require_grads() keeps it out; not modelled)")
            if "projector" not in self.parts:
                rule += "; the trained projector keeps its input for its weight gradient, with no input gradient"
        if "language" in self.parts and "projector" not in self.parts:
            rule += ("; the frozen language model carries the gradient down to the projector: its linear "
                     "layers compute input gradients and keep no input for weight gradients")
        return rule


def parts_of(model) -> dict:
    """parameter node -> (the part it belongs to: vision, audio, projector or language; the module
    name that places it there, '' for the language model)."""
    arch = model.arch
    family = getattr(getattr(model, "family", None), "name", None)
    towers = {kind: TOWERS[kind] + FAMILY_TOWERS.get(family, {}).get(kind, ()) for kind in TOWERS}
    out = {}
    for n, a in arch.graph.nodes.data():
        if a["kind"] != "param":
            continue
        found = [("projector", _match(a["owner"], PROJECTORS))]
        found += [(kind, _match(a["owner"], names)) for kind, names in towers.items()]
        out[n] = next(((k, name) for k, name in found if name is not None), ("language", ""))
    return out


def _modules(frozen: list, parts: dict, fz: Freeze) -> dict:
    """part -> the module names whose parameters it freezes, in graph order."""
    out: dict = {p: [] for p in fz.parts}
    for n in frozen:
        part, name = parts[n]
        name = name or "the text model"
        if name not in out[part]:
            out[part].append(name)
    return {p: tuple(m) for p, m in out.items()}


def rewrite(model, fz: Freeze) -> Arch:
    """The model's graph with every parameter of the parts *fz* names marked frozen; a one-line
    error where the model has no tower or lacks a named part, or where nothing would be trained."""
    arch = model.arch
    parts = parts_of(model)
    have = {p for p, _name in parts.values()}
    if not have & {"vision", "audio"}:
        raise SymgptError(f"{arch.name} has no vision or audio tower beside a language model: --freeze "
                          f"{','.join(fz.parts)} needs one (towers are found by transformers' module names: "
                          f"{', '.join(TOWERS['vision'] + TOWERS['audio'])})")
    for p in fz.parts:
        if p not in have:
            raise SymgptError(f"{arch.name} has no {p if p in ('projector', 'language') else p + ' tower'} "
                              f"to freeze (its parts: {', '.join(q for q in PARTS if q in have)})")
    frozen = [n for n, (p, _name) in parts.items() if p in fz.parts]
    if len(frozen) == len(parts):
        raise SymgptError(f"--freeze {','.join(fz.parts)} leaves nothing of {arch.name} to train")
    constraints = list(arch.constraints)
    if "language" in fz.parts:  # only the parts that read images or audio train: they must run
        media = N_img if "vision" in have else N_aud
        constraints.append(Constraint("le", 1 - media, f"--freeze {','.join(fz.parts)} trains only what reads "
                                      f"{'images' if media == N_img else 'audio'}: {media} must be at least 1 "
                                      f"(--set {media}=1; without any, nothing trainable runs)",
                                      "frozen_language_needs_media"))
    g = DiGraph()
    for n, a in arch.graph.nodes.data():
        g.add_node(n, **a)
    for u, v, a in arch.graph.edges.data():
        g.add_edge(u, v, **dict(a))
    for n in frozen:
        g.nodes[n]["frozen"] = True
    flags = {**arch.flags, "freeze": (fz, _modules(frozen, parts, fz))}
    return Arch(arch.name, g, dict(arch.groups), list(arch.order), constraints, flags, arch.output, arch.loss)


def apply(model, fz: Freeze):
    """*model* with the parts *fz* names frozen (its notes state the rule)."""
    m = model.with_()
    m.__dict__["arch"] = rewrite(model, fz)
    for c in m.arch.constraints[len(model.arch.constraints):]:  # the ones the rewrite adds
        v = evaluate(c.expr, model.bindings)
        if v is not None and v > 0:
            raise SymgptError(f"{model.name}: {c.message}")
    note = fz.describe(m.arch.flags["freeze"][1])
    m.notes = tuple(n for n in model.notes if n != note) + (note,)
    m.__dict__["with_"] = lambda **changes: apply(type(model).with_(m, **changes), fz)
    m.__dict__["free"] = lambda *names: apply(type(model).free(m, *names), fz)
    return m


def params_note(model, frozen: bool) -> str | None:
    """The note of ``params.trainable`` / ``params.frozen`` of a model with frozen parts (None
    without)."""
    entry = model.arch.flags.get("freeze")
    if entry is None:
        return None
    fz, modules = entry
    if frozen:
        return "frozen: " + "; ".join(f"{p} ({', '.join(m)})" for p, m in modules.items())
    return "trainable: every parameter outside " + ", ".join(fz.parts) + ", as requires_grad_(False) leaves them"
