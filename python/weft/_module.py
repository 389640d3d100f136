"""``weft.Module`` (tf.Module): a container of variables and other modules, as TF's "Basic
training loops" guide uses it::

    class MyModel(tf.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

``variables`` / ``trainable_variables`` / ``submodules`` walk the attributes (lists, tuples and
dicts included; dict entries in key order), as TF's attribute tracking does, each object once.
"""
import re

from . import framework as _fw


class Module:
    def __init__(self, name=None):
        if name is None:
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()
        elif not re.match(r"^[A-Za-z_][\w.]*$", name):
            raise ValueError("%r is not a valid module name (letters, digits, _ and ., not starting with a digit)"
                             % name)
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        return _fw.name_scope(self._name)

    def _walk(self):
        """Each tracked object under this module (depth first, attributes in assignment order)."""
        seen = {id(self)}
        stack = [v for k, v in reversed(list(vars(self).items())) if not k.startswith("_name")]
        while stack:
            obj = stack.pop()
            if isinstance(obj, (_fw.Variable, Module)) or isinstance(obj, (list, tuple, dict)):
                if id(obj) in seen:
                    continue
                seen.add(id(obj))
            if isinstance(obj, dict):
                stack.extend(obj[k] for k in reversed(sorted(obj, key=str)))
            elif isinstance(obj, (list, tuple)):
                stack.extend(reversed(obj))
            elif isinstance(obj, (_fw.Variable, Module)):
                yield obj
                if isinstance(obj, Module):
                    stack.extend(reversed(list(vars(obj).values())))

    @property
    def variables(self):
        return tuple(v for v in self._walk() if isinstance(v, _fw.Variable))

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        return tuple(m for m in self._walk() if isinstance(m, Module))

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: the method's operations are made under the module's name scope."""
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapped

