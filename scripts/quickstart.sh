#!/usr/bin/env bash
# From a bare machine to a first bench run: checks Go, bubblewrap, Python 3
# (the example tasks' hidden tests) and Ollama, installs what is missing
# with the platform's usual means where it can (the distribution's packages
# for bubblewrap and Python, Go's release archive from go.dev, Ollama's
# official installer), then runs the example suite on a small model that
# takes tools. bench itself starts `ollama serve` when none is running and
# pulls the model with a progress bar.
#
#   scripts/quickstart.sh                      set up what is missing, then run
#   scripts/quickstart.sh --dry-run            print every step, do none
#   scripts/quickstart.sh --model llama3.1:8b  another model (one with tools)
#   scripts/quickstart.sh -- --tasks recipe-trailing-dot --attempts 1
#                                              flags for bench run after --
#
# Every step it cannot do here (no root and no sudo, an unknown package
# manager, macOS without Homebrew) is printed as the exact command to run;
# it then stops before the run, and exits 1. A step that fails stops it
# (exit 1); the run's own exit status is bench's.
set -euo pipefail
cd "$(dirname "$0")/.."

model=qwen3:0.6b
dry=0
extra=()
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while (($# > 0)); do
	case $1 in
	--dry-run) dry=1 ;;
	--model)
		if (($# < 2)); then
			echo "quickstart.sh: --model: expected a model name, e.g. --model qwen3:0.6b" >&2
			exit 2
		fi
		model=$2
		shift
		;;
	--model=*) model=${1#--model=} ;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		extra=("$@")
		break
		;;
	*)
		echo "quickstart.sh: unknown argument $1 (expected --dry-run, --model M, or and bench run's flags; see --help)" >&2
		exit 2
		;;
	esac
	shift
done

os=$(uname -s)
arch=$(uname -m)
case $arch in
x86_64) goarch=amd64 ;;
aarch64 | arm64) goarch=arm64 ;;
*) goarch=$arch ;;
esac
goos=$(echo "$os" | tr '[:upper:]' '[:lower:]')
want_go=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)

# What is needed to act as root: nothing, sudo, or nobody (then the step
# is printed for the operator).
if ((EUID == 0)); then
	root=()
elif command -v sudo >/dev/null; then
	root=(sudo)
else
	root=(none)
fi

todo=() # the commands the operator must run

# shown COMMAND...: the command as a line to paste into a shell.
shown() {
	local out="" a
	for a in "$@"; do
		out+=" $(printf '%q' "$a")"
	done
	echo "${out# }"
}

# step WHAT COMMAND...: runs a command (printed first as a line to paste);
# with --dry-run only prints it. A command given as `sh -c LINE` is
# printed as LINE. A step that fails stops the script.
step() {
	local what=$1 line
	shift
	line=$(shown "$@")
	if [[ ${1:-} == sh && ${2:-} == -c ]]; then
		line=$3
	elif [[ ${1:-} == sudo && ${2:-} == sh && ${3:-} == -c ]]; then
		line="sudo sh -c $(printf '%q' "$4")"
	fi
	if ((dry)); then
		printf '  would %s: %s\n' "$what" "$line"
		return 0
	fi
	printf '  %s: %s\n' "$what" "$line"
	if ! "$@"; then
		echo "quickstart.sh: this step failed: $line" >&2
		echo "Fix what it says above, then run scripts/quickstart.sh again." >&2
		exit 1
	fi
}

# as_root WHAT COMMAND...: step as root (through sudo when this user is
# not), or a command for the operator when this user cannot become root.
as_root() {
	local what=$1 line
	shift
	if [[ ${root[0]:-} == none ]]; then
		line=$(shown "$@")
		[[ ${1:-} == sh && ${2:-} == -c ]] && line=$3
		todo+=("$line   # as root: $what")
		echo "  cannot become root here (no sudo); as root: $line"
		return 0
	fi
	step "$what" ${root[@]+"${root[@]}"} "$@"
}

# pkg NAME...: installs distribution packages with the package manager
# there is, or says which command would.
pkg() {
	if command -v apt-get >/dev/null; then
		as_root "update the package lists" apt-get update -qq &&
			as_root "install $*" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
	elif command -v dnf >/dev/null; then
		as_root "install $*" dnf install -y "$@"
	elif command -v pacman >/dev/null; then
		as_root "install $*" pacman -S --noconfirm --needed "$@"
	elif command -v zypper >/dev/null; then
		as_root "install $*" zypper --non-interactive install "$@"
	elif command -v apk >/dev/null; then
		as_root "install $*" apk add "$@"
	elif command -v brew >/dev/null; then
		step "install $*" brew install "$@"
	else
		todo+=("install the package(s) $* with your system's package manager")
		echo "  no package manager known here: install $* by hand"
	fi
}

# go_minor VERSION: the minor version of "1.26.8" (26), 0 if none.
go_minor() {
	local v=${1#go}
	v=${v#1.}
	echo "${v%%[!0-9]*}"
}

echo "== Go (go.mod asks for go$want_go)"
have_go=""
if command -v go >/dev/null; then
	have_go=$(go env GOVERSION 2>/dev/null || true)
fi
if [[ -n $have_go ]] && (($(go_minor "$have_go") >= 21)); then
	# Go 1.21 and later fetch the toolchain go.mod names by themselves.
	echo "  found $have_go$([[ $have_go != "go$want_go" ]] && echo " (it fetches go$want_go itself on first use)")"
else
	[[ -n $have_go ]] && echo "  found $have_go: too old to fetch go$want_go by itself"
	if [[ $os == Darwin ]] && command -v brew >/dev/null; then
		step "install Go" brew install go
	elif [[ $os == Linux ]]; then
		if ! command -v curl >/dev/null; then
			pkg curl ca-certificates
		fi
		tarball="https://go.dev/dl/go$want_go.$goos-$goarch.tar.gz"
		as_root "remove an older Go from /usr/local/go" rm -rf /usr/local/go &&
			as_root "install Go $want_go from go.dev into /usr/local/go" sh -c "curl -fsSL '$tarball' | tar -C /usr/local -xz"
		export PATH="/usr/local/go/bin:$PATH"
		echo "  add Go to your PATH for later shells: export PATH=/usr/local/go/bin:\$PATH"
	else
		todo+=("install Go $want_go: https://go.dev/dl/")
		echo "  install Go by hand: https://go.dev/dl/"
	fi
fi

echo "== bubblewrap (the sandbox of the agent's commands and the hidden tests)"
if [[ $os != Linux ]]; then
	todo+=("bench's sandbox is bubblewrap, which is Linux-only: run bench on Linux, or add --sandbox off to bench run (unisolated: the run is marked so)")
	echo "  bubblewrap is Linux-only"
elif command -v bwrap >/dev/null; then
	echo "  found $(bwrap --version)"
else
	pkg bubblewrap
fi

echo "== Python 3 (the example tasks' hidden tests)"
if command -v python3 >/dev/null; then
	echo "  found $(python3 --version 2>&1)"
elif command -v pacman >/dev/null; then
	pkg python
else
	pkg python3
fi

echo "== Ollama (the model server)"
if command -v ollama >/dev/null; then
	echo "  found $(ollama --version 2>/dev/null | tail -n 1 || echo ollama)"
elif [[ $os == Linux ]]; then
	if ! command -v curl >/dev/null; then
		pkg curl ca-certificates
	fi
	# The official installer asks for sudo itself where it needs it.
	if [[ ${root[0]:-} == none ]]; then
		todo+=("curl -fsSL https://ollama.com/install.sh | sh   # as root")
		echo "  cannot become root here: to do by hand, as root: curl -fsSL https://ollama.com/install.sh | sh"
	else
		step "install Ollama with its official installer" sh -c "curl -fsSL https://ollama.com/install.sh | sh"
	fi
elif [[ $os == Darwin ]] && command -v brew >/dev/null; then
	step "install Ollama" brew install ollama
else
	todo+=("install Ollama: https://ollama.com/download")
	echo "  install Ollama by hand: https://ollama.com/download"
fi

run=(go run ./cmd/bench run --model "$model" ${extra[@]+"${extra[@]}"})
if ((${#todo[@]} > 0)); then
	echo
	echo "Not done here; run these, then scripts/quickstart.sh again:"
	printf '  %s\n' "${todo[@]}"
	echo "The run would then be:"
	echo "  $(shown "${run[@]}")"
	exit 1
fi

echo "== the example suite on $model (bench starts ollama serve if none runs, and pulls the model)"
if ((dry)); then
	echo "  would run: $(shown "${run[@]}")"
	exit 0
fi
echo "  $(shown "${run[@]}")"
exec "${run[@]}"
