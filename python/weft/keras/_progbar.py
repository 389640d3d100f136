"""keras.utils.Progbar: Keras' text progress bar for custom loops."""
import sys
import time

import numpy as np

# keras.utils.enable/disable_interactive_logging: with it off (as for logs written to files),
# progress bars that redraw in place (verbose=1) print one line when done instead (verbose=2).
_interactive = [True]


def enable_interactive_logging():
    """Progress bars redraw in place again (verbose=1), Keras' default."""
    _interactive[0] = True


def disable_interactive_logging():
    """Progress bars (Progbar, fit's verbose=1) print one line per epoch instead of redrawing."""
    _interactive[0] = False


def is_interactive_logging_enabled():
    return _interactive[0]


def line_verbose(verbose):
    """fit's verbose after the switch: 1 (a redrawn bar) becomes 2 while interactive logging is off."""
    return 2 if verbose == 1 and not _interactive[0] else verbose


class Progbar:
    """``Progbar(target)``; ``update(current, values=[("loss", v), ...])`` or ``add(n, values)``.
    Values not in ``stateful_metrics`` are shown as their mean over the steps so far (weighted by
    the steps each update covers), as Keras shows them; stateful ones as given. ``verbose``: 1 a
    bar redrawn in place, 2 one line when done, 0 nothing. ``target`` None: unknown length."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step"):
        self.target = target
        self.width = int(width)
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self._values = {}  # name -> [weighted sum, weight] (or [value, 1] when stateful)
        self._order = []
        self._seen = 0
        self._start = time.time()
        self._last = 0.0

    def update(self, current, values=None, finalize=None):
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for k, v in values or []:
            if k not in self._order:
                self._order.append(k)
            v = float(np.mean(v))
            if k in self.stateful_metrics:
                self._values[k] = [v, 1]
            else:
                step = max(current - self._seen, 1)
                s = self._values.setdefault(k, [0.0, 0])
                s[0] += v * step
                s[1] += step
        self._seen = current
        now = time.time()
        if line_verbose(self.verbose) == 1:
            if not finalize and now - self._last < self.interval:
                return
            self._last = now
            line = self._bar(current) + self._timing(current, now, finalize) + self._metrics()
            sys.stdout.write("\r" + line + ("\n" if finalize else ""))
            sys.stdout.flush()
        elif line_verbose(self.verbose) == 2 and finalize:
            digits = len(str(self.target)) if self.target else 1
            sys.stdout.write("%*d/%s - %.0fs%s\n" % (digits, current, self.target, now - self._start, self._metrics()))
            sys.stdout.flush()

    def add(self, n, values=None):
        self.update(self._seen + n, values)

    def _bar(self, current):
        if self.target is None:
            return "%7d/Unknown" % current
        digits = len(str(self.target))
        text = "%*d/%d [" % (digits, current, self.target)
        filled = int(self.width * min(current / self.target, 1.0)) if self.target else self.width
        if filled > 0:
            text += "=" * (filled - 1) + (">" if current < self.target else "=")
        return text + "." * (self.width - filled) + "]"

    def _timing(self, current, now, finalize):
        per_unit = (now - self._start) / current if current else 0.0
        if self.target is not None and not finalize:
            eta = per_unit * (self.target - current)
            return " - ETA: %s" % ("%d:%02d:%02d" % (eta // 3600, eta % 3600 // 60, eta % 60) if eta > 3600 else
                                   "%d:%02d" % (eta // 60, eta % 60) if eta > 60 else "%ds" % eta)
        unit = ("%.0fs/%s" % (per_unit, self.unit_name) if per_unit >= 1 else
                "%.0fms/%s" % (per_unit * 1e3, self.unit_name) if per_unit >= 1e-3 else
                "%.0fus/%s" % (per_unit * 1e6, self.unit_name))
        return " - %.0fs %s" % (now - self._start, unit)

    def _metrics(self):
        out = ""
        for k in self._order:
            total, weight = self._values[k]
            v = total / max(weight, 1)
            out += " - %s: %s" % (k, "%.4f" % v if abs(v) > 1e-3 else "%.4e" % v)
        return out
