# Shell helpers the scripts share; source it after defining die MESSAGE
# (print MESSAGE and exit non-zero), which the helpers call on failure:
#
#   . "$(dirname "$0")/lib.sh"

# started FILE PREFIX: wait up to 10 s for the line a server prints on
# stdout (FILE) once it listens, "PREFIX ... http://HOST:PORT", and echo
# HOST:PORT. It dies naming FILE, with what it and the matching .log
# (FILE's stderr, by convention) hold, when the line does not come.
started() {
	local i
	for i in $(seq 1 100); do
		if grep -q "$2" "$1" 2>/dev/null; then
			grep -m1 "$2" "$1" | sed 's#.*http://##'
			return
		fi
		sleep 0.1
	done
	die "no '$2' in $1: $(cat "$1" "${1%.out}.log" 2>/dev/null)"
}

# free_port WHAT: echo a loopback port nothing listens on, for a server
# (WHAT, named in the error) that cannot pick its own and report it.
free_port() {
	local p
	for p in $(shuf -i 20000-60000 -n 50); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port for $1"
}

# need COMMAND[=PACKAGE]...: install with apt-get (through sudo when not
# root) the Debian packages of the commands that are not on PATH; PACKAGE
# defaults to COMMAND.
need() {
	local c pkgs=()
	for c in "$@"; do
		command -v "${c%%=*}" >/dev/null || pkgs+=("${c#*=}")
	done
	[ ${#pkgs[@]} -gt 0 ] || return 0
	echo "--- installing ${pkgs[*]}"
	local sudo=""
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
	$sudo apt-get update -qq || die "apt-get update failed"
	$sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null || die "apt-get install ${pkgs[*]} failed"
}
