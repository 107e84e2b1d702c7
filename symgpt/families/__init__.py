"""Architecture families, declared as data on the op catalog. Importing registers them."""

from .base import Family, families, family, register_family  # noqa: F401
from . import named  # noqa: F401
from . import deepseek  # noqa: F401
from . import bert  # noqa: F401
from . import t5  # noqa: F401
from . import bart  # noqa: F401
from . import vit  # noqa: F401
