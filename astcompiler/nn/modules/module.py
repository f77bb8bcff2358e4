"""``Module``: the base class of every layer, with torch.nn.Module's surface and semantics.

A module owns three ordered registries: ``_parameters`` (``Parameter`` or None), ``_buffers``
(ndarrays or None; names in ``_non_persistent_buffers_set`` stay out of ``state_dict``) and
``_modules`` (child modules or None). Attribute assignment files values into them as torch does.

Calling a module runs ``_call_impl``: global forward pre-hooks, the module's forward pre-hooks,
``forward``, global forward hooks, the module's forward hooks (torch's documented order: global
hooks come first on both sides). The common path is plain Python without ``try`` so a compiler
can inline it; only when an ``always_call`` forward hook exists does the call go through
``_call_with_always_called_hooks``, which runs those hooks even when forward raises.

``hooks_version()`` is one integer that changes whenever any forward or backward (pre-)hook,
module-level or global, is registered or removed through the API: compiled code can guard on it
instead of on every hook dict. (Editing the hook dicts by hand does not change it.)
"""

from __future__ import annotations

import abc
import itertools
import threading
import warnings
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping, NamedTuple, TypeVar

import numpy as np

from .._utils import add_indent, typename
from ..compile_support import run_compiled_module
from ..hooks import RemovableHandle, backward_call_end, backward_call_start
from ..parameter import Parameter

__all__ = ["Module", "ModuleRegistry", "hooks_version", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "state_version"]

T = TypeVar("T", bound="Module")
Hook = Callable[..., Any]

# ---------------------------------------------------------------------------------------------
# Global forward hooks and the hook version
# ---------------------------------------------------------------------------------------------

_global_forward_pre_hooks: "OrderedDict[int, Hook]" = OrderedDict()
_global_forward_hooks: "OrderedDict[int, Hook]" = OrderedDict()
_global_forward_hooks_with_kwargs: "OrderedDict[int, bool]" = OrderedDict()
_global_forward_hooks_always_called: "OrderedDict[int, bool]" = OrderedDict()
_global_backward_pre_hooks: "OrderedDict[int, Hook]" = OrderedDict()
_global_backward_hooks: "OrderedDict[int, Hook]" = OrderedDict()

_hooks_version = 0
_hooks_version_lock = threading.Lock()


def _eager_in_compiled_code(fn: Any) -> Any:
    """Mark a method that compiled code must not inline: a graph break runs it eagerly (its hooks
    fire as usual)."""
    fn.__ac_eager__ = (f"Module.{fn.__name__}() runs its hooks eagerly; see docs/modules.md "
                       "(compiling modules)")
    return fn


def hooks_version() -> int:
    """An integer that increases whenever any forward (pre-)hook is registered or removed."""
    return _hooks_version


def _bump_hooks_version() -> None:
    global _hooks_version
    with _hooks_version_lock:
        _hooks_version += 1
    _bump_state_version()


# ---------------------------------------------------------------------------------------------
# The module-state version
# ---------------------------------------------------------------------------------------------

_state_version = 0
_NOT_SET = object()


def state_version() -> int:
    """An integer that increases whenever any module's attributes, parameters, buffers,
    submodules or forward hooks change through the module API: ``__setattr__``, ``__delattr__``,
    ``register_*``, ``train``/``eval``, the registries' own dict methods. Compiled code re-checks
    the module attributes it read only when this moved. (Writes that bypass the API, into
    ``module.__dict__`` or with ``object.__setattr__``, do not change it.)"""
    return _state_version


def _bump_state_version() -> None:
    global _state_version
    with _hooks_version_lock:
        _state_version += 1


class ModuleRegistry(dict):
    """A module's ``_parameters``, ``_buffers`` or ``_modules``: a dict whose every change moves
    ``state_version()``, after the change (a guard check in another thread between the two sees
    the old version, so it re-checks once the version moves, never caching the old state under the
    new version)."""

    __ac_dict__ = True  # read like a dict by the compiler

    def __setitem__(self, key: Any, value: Any) -> None:
        try:
            dict.__setitem__(self, key, value)
        finally:
            _bump_state_version()

    def __delitem__(self, key: Any) -> None:
        try:
            dict.__delitem__(self, key)
        finally:
            _bump_state_version()

    def __ior__(self, other: Any) -> "ModuleRegistry":
        try:
            dict.update(self, other)
        finally:
            _bump_state_version()
        return self

    def clear(self) -> None:
        try:
            dict.clear(self)
        finally:
            _bump_state_version()

    def pop(self, *args: Any) -> Any:
        try:
            return dict.pop(self, *args)
        finally:
            _bump_state_version()

    def popitem(self) -> tuple:
        try:
            return dict.popitem(self)
        finally:
            _bump_state_version()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        try:
            return dict.setdefault(self, key, default)
        finally:
            _bump_state_version()

    def update(self, *args: Any, **kwargs: Any) -> None:
        try:
            dict.update(self, *args, **kwargs)
        finally:
            _bump_state_version()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (ModuleRegistry, (dict(self),))


def register_module_forward_pre_hook(hook: Hook) -> RemovableHandle:
    """A forward pre-hook for every module, run before the module's own pre-hooks.

    ``hook(module, args) -> None or new args`` (a non-tuple is wrapped in a tuple).
    """
    handle = RemovableHandle(_global_forward_pre_hooks, on_remove=_bump_hooks_version)
    _global_forward_pre_hooks[handle.id] = hook
    _bump_hooks_version()
    return handle


def register_module_forward_hook(hook: Hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """A forward hook for every module, run before the module's own forward hooks.

    ``hook(module, args, output)`` or, with ``with_kwargs``, ``hook(module, args, kwargs, output)``;
    a non-None result replaces the output. ``always_call`` runs it even when forward raises.
    """
    handle = RemovableHandle(
        _global_forward_hooks,
        extra_dict=[_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called],
        on_remove=_bump_hooks_version)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    _bump_hooks_version()
    return handle


def register_module_full_backward_pre_hook(hook: Hook) -> RemovableHandle:
    """A backward pre-hook for every module, run before the module's own: ``hook(module,
    grad_output) -> None`` (under ``ac.grad``; see docs/gradients.md)."""
    handle = RemovableHandle(_global_backward_pre_hooks, on_remove=_bump_hooks_version)
    _global_backward_pre_hooks[handle.id] = hook
    _bump_hooks_version()
    return handle


def register_module_full_backward_hook(hook: Hook) -> RemovableHandle:
    """A backward hook for every module, run before the module's own: ``hook(module,
    grad_input, grad_output) -> None`` (under ``ac.grad``; see docs/gradients.md)."""
    handle = RemovableHandle(_global_backward_hooks, on_remove=_bump_hooks_version)
    _global_backward_hooks[handle.id] = hook
    _bump_hooks_version()
    return handle


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not expect."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    __str__ = __repr__


class _CallProgress:
    """The latest args, kwargs and result of a call, and the always-call hooks already run:
    what ``_call_with_always_called_hooks`` needs when forward or a hook raises."""

    __slots__ = ("args", "kwargs", "result", "called")

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.args, self.kwargs, self.result = args, kwargs, None
        self.called: set[int] = set()


def _forward_unimplemented(self: "Module", *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


def _check_member_name(kind: str, name: Any) -> None:
    """torch's checks on a parameter/buffer/module name (type, '.', empty)."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


def _remove_from(name: str, *containers: Any) -> None:
    for container in containers:
        if name in container:
            if isinstance(container, dict):
                del container[name]
            else:
                container.discard(name)


def _join(prefix: str, name: str) -> str:
    return prefix + ("." if prefix else "") + name


# ---------------------------------------------------------------------------------------------
# Module
# ---------------------------------------------------------------------------------------------


class ModuleType(abc.ABCMeta):
    """The class of module classes: setting or deleting a class attribute (``forward``,
    ``__call__``, ``__bases__``...) moves ``state_version()``, so compiled code re-checks the
    class attributes it read only when it moved (``guards/module_tree.py``). (A function's own
    ``__code__`` can change without it: guards keep checking those.) It derives from
    ``abc.ABCMeta`` so that ``class M(nn.Module, abc.ABC)`` works as with torch."""

    def __setattr__(cls, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        _bump_state_version()  # after: a check between sees the old version

    def __delattr__(cls, name: str) -> None:
        super().__delattr__(name)
        _bump_state_version()  # after: a check between sees the old version


class Module(metaclass=ModuleType):
    """Base class for all neural network modules; subclass it and define ``forward``."""

    _version: int = 1  # recorded in state_dict metadata, as torch does
    _compile_kwargs: dict[str, Any] | None = None
    training: bool
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self) -> None:
        init = object.__setattr__
        init(self, "training", True)
        init(self, "_parameters", ModuleRegistry())
        init(self, "_buffers", ModuleRegistry())
        init(self, "_non_persistent_buffers_set", set())
        init(self, "_modules", ModuleRegistry())
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_backward_pre_hooks", "_backward_hooks", "_state_dict_pre_hooks",
                     "_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            init(self, name, OrderedDict())
        init(self, "_compile_kwargs", None)

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._compile_kwargs is not None:
            return run_compiled_module(self, *args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """Hooks and forward, in torch's order. Plain Python, no ``try``: a compiler inlines it.
        With backward hooks, the call's inputs (after the forward pre-hooks) and outputs (after
        the forward hooks) are recorded for ``ac.grad`` (``autodiff/module_hooks.py``)."""
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_hooks or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        backward_hooked = (self._backward_hooks or self._backward_pre_hooks
                           or _global_backward_hooks or _global_backward_pre_hooks)
        if self._forward_hooks_always_called or _global_forward_hooks_always_called:
            return _call_with_always_called_hooks(self, args, kwargs)
        for hook_id, hook in self._forward_pre_hooks_in_order():
            args, kwargs = self._apply_forward_pre_hook(hook_id, hook, args, kwargs)
        token = backward_call_start(self, args) if backward_hooked else None
        result = self.forward(*args, **kwargs)
        for hook_id, hook in self._forward_hooks_in_order():
            result = self._apply_forward_hook(hook_id, hook, args, kwargs, result)
        if backward_hooked:
            backward_call_end(token, result)
        return result

    def _forward_pre_hooks_in_order(self) -> tuple:
        """A snapshot (hooks may remove themselves) of global, then module, pre-hooks."""
        return tuple(_global_forward_pre_hooks.items()) + tuple(self._forward_pre_hooks.items())

    def _forward_hooks_in_order(self) -> tuple:
        """A snapshot of global, then module, forward hooks."""
        return tuple(_global_forward_hooks.items()) + tuple(self._forward_hooks.items())

    def _apply_forward_pre_hook(self, hook_id: int, hook: Hook, args: tuple,
                                kwargs: dict) -> tuple[tuple, dict]:
        if hook_id in self._forward_pre_hooks_with_kwargs:
            result = hook(self, args, kwargs)
            if result is None:
                return args, kwargs
            if isinstance(result, tuple) and len(result) == 2:
                return result
            raise RuntimeError("forward pre-hook must return None or a tuple of "
                               f"(new_args, new_kwargs), but got {result}.")
        result = hook(self, args)
        if result is None:
            return args, kwargs
        if not isinstance(result, tuple):
            result = (result,)
        return result, kwargs

    def _apply_forward_hook(self, hook_id: int, hook: Hook, args: tuple, kwargs: dict,
                            result: Any) -> Any:
        with_kwargs = (hook_id in self._forward_hooks_with_kwargs
                       or hook_id in _global_forward_hooks_with_kwargs)
        if with_kwargs:
            hook_result = hook(self, args, kwargs, result)
        else:
            hook_result = hook(self, args, result)
        return result if hook_result is None else hook_result

    def _is_always_called(self, hook_id: int) -> bool:
        return hook_id in self._forward_hooks_always_called or \
            hook_id in _global_forward_hooks_always_called

    def compile(self, **kwargs: Any) -> None:
        """Compile this module's ``__call__`` in place; ``kwargs`` are ``astcompiler.compile``'s."""
        self._compile_kwargs = kwargs

    # -- registration -------------------------------------------------------------------------

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_member_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(astcompiler.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: np.ndarray | None,
                        persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter; ``persistent=False`` keeps it out of
        ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_member_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, np.ndarray):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(numpy.ndarray or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module (or a None placeholder) under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        _check_member_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` (``""`` is the module itself)."""
        module: Module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (``"fc.weight"``)."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> np.ndarray:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    # -- attributes ---------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: look in the three registries.
        state = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            members = state.get(registry)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        state = self.__dict__
        changed = state.get(name, _NOT_SET) is not value  # (the registries' writes move it too)
        try:
            self._set_attribute(name, value, state)
        finally:
            if changed:
                _bump_state_version()  # after the write: see ModuleRegistry

    def _set_attribute(self, name: str, value: Any, state: dict) -> None:
        params = state.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, state, self._buffers, self._modules,
                         self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(astcompiler.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            self._set_non_parameter(name, value)

    def _set_non_parameter(self, name: str, value: Any) -> None:
        state = self.__dict__
        modules = state.get("_modules")
        buffers = state.get("_buffers")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, state, self._parameters, self._buffers,
                         self._non_persistent_buffers_set)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(astcompiler.nn.Module or None expected)")
            modules[name] = value
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, np.ndarray):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(numpy.ndarray or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        try:
            self._delete_attribute(name)
        finally:
            _bump_state_version()  # after the write: see ModuleRegistry

    def _delete_attribute(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        members = list(self._parameters) + list(self._modules) + list(self._buffers)
        names = list(object.__dir__(self)) + [key for key in members if not key[0].isdigit()]
        return sorted(set(names))

    # -- iteration ----------------------------------------------------------------------------

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """This module and every submodule, depth first, with dotted names; a module reached
        twice is yielded once unless ``remove_duplicate=False``."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, _join(prefix, name), remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """The direct children (each module once), with their names."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        """Members of ``registry`` of this module (and submodules), each array once by identity."""
        seen: set[int] = set()
        owners = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                  if recurse else [(prefix, self)])
        for owner_prefix, owner in owners:
            for name, value in getattr(owner, registry).items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield _join(owner_prefix, name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, np.ndarray]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[np.ndarray]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self: T, fn: Callable[["Module"], None]) -> T:
        """Call ``fn`` on every submodule (children first), then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def train(self: T, mode: bool = True) -> T:
        """Set training mode on this module and every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    # -- hooks --------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook: Hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args) -> None or new args`` before forward; with ``with_kwargs``,
        ``hook(module, args, kwargs) -> None or (new_args, new_kwargs)``."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs,
                                 on_remove=_bump_hooks_version)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        _bump_hooks_version()
        return handle

    def register_forward_hook(self, hook: Hook, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output`` after forward; with
        ``with_kwargs``, ``hook(module, args, kwargs, output)``. ``always_call`` runs it even
        when forward (or an earlier hook) raises."""
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
            on_remove=_bump_hooks_version)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        _bump_hooks_version()
        return handle

    def register_full_backward_pre_hook(self, hook: Hook, *,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> None``: the cotangents of this module's outputs, under
        ``ac.grad``, after the backward pass (docs/gradients.md)."""
        return self._add_backward_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Hook, *, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None``: the cotangents of this module's
        inputs and outputs, under ``ac.grad``, after the backward pass (docs/gradients.md)."""
        return self._add_backward_hook(self._backward_hooks, hook, prepend)

    def _add_backward_hook(self, hooks: "OrderedDict[int, Hook]", hook: Hook,
                           prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks, on_remove=_bump_hooks_version)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        _bump_hooks_version()
        return handle

    def register_state_dict_pre_hook(self, hook: Hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars) -> None``, before this module saves its state."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata) -> None``, after this module's
        subtree is saved; it may edit ``state_dict`` in place (returning a value is an error)."""
        return self._add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None``, before this module loads its state."""
        return self._add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook: Hook) -> RemovableHandle:
        """``hook(module, incompatible_keys) -> None`` after this module's subtree is loaded;
        it may edit ``incompatible_keys.missing_keys/unexpected_keys`` in place."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    @staticmethod
    def _add_hook(hooks: "OrderedDict[int, Hook]", hook: Hook) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    # -- state dict ---------------------------------------------------------------------------

    @_eager_in_compiled_code
    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name: this module's own parameters, its
        buffers, then each child's entries (torch's order).

        Values are the arrays themselves seen as plain ndarrays (``p.view(np.ndarray)``): they
        share memory with the module, like torch's detached tensors. Copy them to keep a
        snapshot. ``keep_vars=True`` returns the ``Parameter`` objects.
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in tuple(self._state_dict_hooks.values()):
            if hook(self, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (no submodules)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.view(np.ndarray)
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.view(np.ndarray)
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Override (with ``set_extra_state``) to save extra state under ``_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state: Any) -> None:
        """Override (with ``get_extra_state``) to load what ``get_extra_state`` saved."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    @_eager_in_compiled_code
    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict`` into this module's parameters and buffers, in place.

        Values are copied into the existing arrays (so code holding them sees the new values);
        ``assign=True`` puts the given arrays in instead (wrapped in ``Parameter`` for
        parameters). Shape mismatches are errors; with ``strict`` (the default) missing and
        unexpected keys are too. Errors are collected and raised as one ``RuntimeError``.
        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        self._load_subtree(dict(state_dict), "", metadata, assign, missing, unexpected, errors)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{key}"' for key in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{key}"' for key in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_subtree(self, state_dict: dict, prefix: str, metadata: Any, assign: bool,
                      missing: list[str], unexpected: list[str], errors: list[str]) -> None:
        local_metadata = dict(metadata.get(prefix[:-1], {})) if metadata is not None else {}
        if assign:
            local_metadata["assign_to_params_buffers"] = True
        self._load_from_state_dict(state_dict, prefix, local_metadata, True, missing, unexpected,
                                   errors)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
                child._load_subtree(child_state, child_prefix, metadata, assign, missing,
                                    unexpected, errors)
        keys = _IncompatibleKeys(missing, unexpected)
        for hook in tuple(self._load_state_dict_post_hooks.values()):
            if hook(self, keys) is not None:
                raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` "
                                   "are not expected to return new values; modify "
                                   "incompatible_keys in place instead.")

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Load this module's own entries (no submodules); record what is missing, unexpected
        or wrong. Override to convert old checkpoints."""
        for hook in tuple(self._load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = self._local_state()
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, current in local_state.items():
            key = prefix + name
            if key in state_dict:
                self._load_one(name, key, current, state_dict[key], assign, error_msgs)
            elif strict:
                missing_keys.append(key)
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            unexpected_keys.extend(self._unexpected_keys(state_dict, prefix, local_state,
                                                         extra_key))

    def _local_state(self) -> dict[str, np.ndarray]:
        """Parameters and persistent buffers that are not None, by local name."""
        state = {k: v for k, v in self._parameters.items() if v is not None}
        state.update((k, v) for k, v in self._buffers.items()
                     if v is not None and k not in self._non_persistent_buffers_set)
        return state

    def _unexpected_keys(self, state_dict: dict, prefix: str, local_state: dict,
                         extra_key: str) -> list[str]:
        """Keys under ``prefix`` that name neither a local entry nor a child module."""
        found = []
        for key in state_dict:
            if not key.startswith(prefix) or key == extra_key:
                continue
            head, dot, _ = key[len(prefix):].partition(".")
            if (dot and head not in self._modules) or (not dot and head not in local_state):
                found.append(key)
        return found

    def _load_one(self, name: str, key: str, current: np.ndarray, value: Any, assign: bool,
                  error_msgs: list[str]) -> None:
        """Copy (or assign) one checkpoint value into the entry ``name``."""
        if not isinstance(value, np.ndarray):
            error_msgs.append(f'While copying the parameter named "{key}", expected '
                              f"numpy.ndarray from checkpoint but received {type(value)}")
            return
        if value.shape != current.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{current.shape}.")
            return
        try:
            if assign:
                if isinstance(current, Parameter) and not isinstance(value, Parameter):
                    value = Parameter(value)
                setattr(self, name, value)
            else:
                np.copyto(current, value, casting="unsafe")
        except Exception as error:  # collected like torch, reported with the others
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                              f"the model are {current.shape} and whose dimensions in the "
                              f"checkpoint are {value.shape}, an exception occurred : "
                              f"{error.args}.")

    # -- printing -----------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """One line (or several) describing this module's settings, shown by ``repr``."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + add_indent(repr(module), 2)
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _call_with_always_called_hooks(module: Module, args: tuple, kwargs: dict) -> Any:
    """``_call_impl`` when an ``always_call`` forward hook exists: if forward or a hook raises,
    the always-call hooks not yet run are run (their own errors become warnings), then the
    error propagates."""
    progress = _CallProgress(args, kwargs)
    try:
        return _tracked_call(module, progress)
    except Exception:
        _run_always_called_hooks_after_error(module, progress)
        raise


def _tracked_call(module: Module, progress: _CallProgress) -> Any:
    for hook_id, hook in module._forward_pre_hooks_in_order():
        progress.args, progress.kwargs = module._apply_forward_pre_hook(
            hook_id, hook, progress.args, progress.kwargs)
    progress.result = module.forward(*progress.args, **progress.kwargs)
    for hook_id, hook in module._forward_hooks_in_order():
        if module._is_always_called(hook_id):
            progress.called.add(hook_id)
        progress.result = module._apply_forward_hook(hook_id, hook, progress.args,
                                                     progress.kwargs, progress.result)
    return progress.result


def _run_always_called_hooks_after_error(module: Module, progress: _CallProgress) -> None:
    for hook_id, hook in module._forward_hooks_in_order():
        if not module._is_always_called(hook_id) or hook_id in progress.called:
            continue
        try:
            progress.result = module._apply_forward_hook(hook_id, hook, progress.args,
                                                         progress.kwargs, progress.result)
        except Exception as error:
            where = "global module" if hook_id in _global_forward_hooks else "module"
            warnings.warn(f"{where} forward hook with ``always_call=True`` raised an exception "
                          f"that was silenced as another error was raised in forward: {error}",
                          stacklevel=2)
