"""The layers of ``astcompiler.nn`` and the global forward hooks.

``register_module_forward_pre_hook`` / ``register_module_forward_hook`` (and the backward ones,
``register_module_full_backward_pre_hook`` / ``register_module_full_backward_hook``) add hooks run
for every module; ``hooks_version()`` changes whenever any such hook is registered or removed,
``state_version()`` whenever any module's attributes, registries or hooks change.
"""

from .activation import GELU, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .linear import Identity, Linear
from .module import (Module, ModuleRegistry, hooks_version, register_module_forward_hook,
                     register_module_forward_pre_hook, register_module_full_backward_hook,
                     register_module_full_backward_pre_hook, state_version)
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = ["Dropout", "Embedding", "GELU", "Identity", "LayerNorm", "Linear", "Module",
           "ModuleDict", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh",
           "ModuleRegistry", "hooks_version", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "state_version"]
