"""The op catalog. Importing this package registers every op definition."""

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
    op_class,
    register,
    registered_kinds,
)
from .attention import CausalMask, Dropout, Softmax  # noqa: F401
from .elementwise import GELU, Add, Mul, Scale, SiLU  # noqa: F401
from .embedding import Embedding, PositionEmbedding  # noqa: F401
from .linear import Linear, Matmul  # noqa: F401
from .loss import CrossEntropy  # noqa: F401
from .norm import LayerNorm, RMSNorm  # noqa: F401
from .views import FirstToken, MergeHeads, RepeatKV, Slice, SplitHeads  # noqa: F401
from .activations import ReLU, Sigmoid, SoftCap, Tanh  # noqa: F401
from .concat import Concat  # noqa: F401
from .moe import MoECombine, TopK  # noqa: F401
from .positions import AlibiBias, RelativePositionBias, Rotary, RotaryTable, SinusoidalPositions  # noqa: F401
from .vision import AddPositions, ClassToken, Conv2d, FlattenPatches  # noqa: F401
