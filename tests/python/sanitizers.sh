# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced (sh): sanitizer_env PYDIR. In an ASan/UBSan build the Python module
# links the sanitizer runtimes, which must come first in an (uninstrumented)
# interpreter: preload them, and set what the tests need to run under them.
# Nothing happens for a plain build.
sanitizer_env() {
	_ext=$(ls "$1"/sockdiag/_sockdiag*.so 2>/dev/null | head -n 1)
	_preload=""
	[ -n "$_ext" ] || return 0
	for _lib in libasan libubsan; do
		if ldd "$_ext" | grep -q "$_lib\.so"; then
			_preload="$_preload $(ldd "$_ext" | awk -v l="$_lib" '$1 ~ "^" l "\\.so" { print $3 }')"
		fi
	done
	[ -n "$_preload" ] || return 0
	# The interpreter's own allocations are not ours to report (it frees
	# little at exit); the leak checks are the tests' tracemalloc and RSS
	# bounds. PYTHONMALLOC=malloc lets ASan see every object's memory.
	export LD_PRELOAD="${_preload# }"
	export PYTHONMALLOC=malloc
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export SDIAG_PY_ASAN=1
	# A sanitizer's report is written to descriptor 2 and the process exits:
	# pytest's descriptor-level capture would swallow it with the test's output.
	export PYTEST_ADDOPTS="${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }--capture=sys"
}
