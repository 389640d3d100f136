"""``tf.compat.v1.flags`` (``tf.app.flags``): TF1's command-line flags.

    flags = tf.app.flags
    flags.DEFINE_string("job_name", "", "ps or worker")
    flags.DEFINE_integer("task_index", 0, "index of the task")
    FLAGS = flags.FLAGS
    tf.app.run()          # parses sys.argv (--job_name=ps, --task_index 1, --nofoo), then calls main(argv)

Reading a flag before parsing parses sys.argv then (as TF1's flags did); unknown arguments are
left for main's argv.
"""
import sys


class _Flags:
    def __init__(self):
        object.__setattr__(self, "_defs", {})     # name -> (parser, help)
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, name, default, help, parser):
        if name in self._defs:
            raise ValueError("flag --%s is defined twice" % name)
        self._defs[name] = (parser, help)
        self._values[name] = default

    def __call__(self, argv):
        """Parses ``argv`` (argv[0] is the program); returns the arguments that are not flags."""
        rest, i = [argv[0]] if argv else [], 1
        while i < len(argv):
            arg = argv[i]
            i += 1
            if arg == "--":
                rest.extend(argv[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, eq, value = arg.lstrip("-").partition("=")
            if name not in self._defs and name.startswith("no") and self._defs.get(name[2:], (None,))[0] is _bool:
                self._values[name[2:]] = False
                continue
            if name not in self._defs:
                rest.append(arg)
                continue
            parser = self._defs[name][0]
            if not eq:
                if parser is _bool:
                    self._values[name] = True
                    continue
                if i >= len(argv):
                    raise ValueError("flag --%s needs a value" % name)
                value, i = argv[i], i + 1
            self._values[name] = parser(name, value)
        object.__setattr__(self, "_parsed", True)
        return rest

    def __getattr__(self, name):
        if name not in self._defs:
            raise AttributeError("no flag --%s (defined: %s)" % (name, ", ".join(sorted(self._defs)) or "none"))
        if not self._parsed:
            self(sys.argv)
        return self._values[name]

    def __setattr__(self, name, value):
        if name not in self._defs:
            raise AttributeError("no flag --%s to set" % name)
        self._values[name] = value

    def flag_values_dict(self):
        return dict(self._values)


def _typed(kind):
    def parse(name, value):
        try:
            return kind(value)
        except ValueError:
            raise ValueError("flag --%s: %r is not a valid %s" % (name, value, kind.__name__)) from None
    return parse


def _bool(name, value):
    if str(value).lower() in ("1", "true", "t", "yes", "y"):
        return True
    if str(value).lower() in ("0", "false", "f", "no", "n"):
        return False
    raise ValueError("flag --%s: %r is not a boolean" % (name, value))


def _list(name, value):
    return [v for v in value.split(",") if v]


FLAGS = _Flags()


def DEFINE_string(name, default, help, **kwargs):  # noqa: N802 - TF's names
    FLAGS._define(name, default, help, lambda n, v: v)


def DEFINE_integer(name, default, help, **kwargs):  # noqa: N802
    FLAGS._define(name, default, help, _typed(int))


def DEFINE_float(name, default, help, **kwargs):  # noqa: N802
    FLAGS._define(name, default, help, _typed(float))


def DEFINE_boolean(name, default, help, **kwargs):  # noqa: N802
    FLAGS._define(name, default, help, _bool)


def DEFINE_list(name, default, help, **kwargs):  # noqa: N802
    FLAGS._define(name, default, help, _list)


DEFINE_bool = DEFINE_boolean
