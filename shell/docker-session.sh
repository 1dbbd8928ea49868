# swerun's Docker session loop in the shell: the program of a session container's PID 1, which runs every
# action of a run (exec_mode: session), where the image has no perl with its POSIX module (where it has,
# shell/docker-session.pl runs instead). See src/environments/docker/session.ts for the other side.
#
# The container's command is `/bin/sh -c 'IFS= read -r l && eval "$l"' swerun-session <interpreter...>`.
# swerun writes one line that, perl not being there, sets `lifetime` (a `sleep` duration) and `keep` (empty
# or 1), skips the Perl loop (up to the line "swerun-session-perl-end"), reads this file up to the line
# "swerun-session-script-end" and evals it; "$@" is the interpreter (bash -lc).
#
# Protocol, on the container's stdin and stdout:
#   1. The loop prints "swerun-session ready", then the container's uname -s -n -r -v -m, tab-separated.
#   2. A request is: a line "<nonce> <marker>", the cwd, the lines of a snippet exporting the action's
#      variables, a line holding only the nonce, the command's lines, and the nonce again. All of it is
#      read with shell builtins: a request costs no process.
#   3. The interpreter runs the command in a new process session (setsid, when the image has it), stdin
#      from /dev/null, stderr merged into stdout, SWERUN_ACTION_ID=<marker> in its environment (so a
#      timeout can find and kill all of its processes). Its output goes through `cat`, which ends when
#      every process holding the output has closed it, as a `docker exec` stream does.
#   4. Then the loop prints "\n<nonce> <exit code>\n". The nonce is never in the command's environment,
#      so no output can fake the end of an action.
# How the output reaches `cat`: where the image has mkfifo, a writable /tmp and /proc, through one FIFO
# made at the start (then removed; the loop keeps its read end as fd 8), and an action costs two
# processes: `cat`, and the subshell that execs setsid and the interpreter, whose exit code the loop then
# has at once. A `cat` that ends otherwise than at the output's end (a timeout killed it) leaves the FIFO
# to what is left of that action, and the next action gets a new one. Elsewhere each action gets a pipe of
# its own and its exit code comes back through a command substitution: two processes more.
# The loop ends when its stdin closes (swerun ended or died), or, with `keep`, sleeps out its lifetime
# so the container can be entered; SIGALRM from the lifetime timer ends it at any time.

# No `cat`, no output: exit, and swerun falls back to one exec per action.
command -v cat >/dev/null 2>&1 || exit 3
# fd 3 is the connection to swerun while fd 1 is redirected around an action.
exec 3>&1
s=
command -v setsid >/dev/null 2>&1 && s=setsid
# As PID 1 the loop takes no signal a command sends it, except SIGALRM, the timer's.
trap 'exit 0' ALRM
trap : HUP INT QUIT TERM USR1 USR2
(sleep $lifetime; kill -ALRM $$) >/dev/null 2>&1 3>&- &
# l holds a newline (the loader set it). One uname prints the five fields space-separated: only the
# version holds spaces, so it is what lies between the release and the machine.
u=$(uname -s -n -r -v -m 2>/dev/null) || u=
k=${u%% *}; u=${u#* }; n=${u%% *}; u=${u#* }; m=${u%% *}; u=${u#* }
case $u in *' '*) ;; *) k= ;; esac
printf 'swerun-session ready\t%s\t%s\t%s\t%s\t%s\n' "$k" "$n" "$m" "${k:+${u% *}}" "${k:+${u##* }}"
# f=1 while fd 8 holds the read end of a FIFO (see the header); q numbers the FIFOs made, w is the last.
f= q=0
fifo() {
  exec 8<&-
  f= q=$((q + 1))
  w=/tmp/.swerun-output-$$-$q
  { mkfifo -m 600 "$w" || { rm -f "$w" && mkfifo -m 600 "$w"; }; } >/dev/null 2>&1 || return 0
  { command exec 7<>"$w" && command exec 8</proc/$$/fd/7 && f=1; } 2>/dev/null
  exec 7>&-
  rm -f "$w"
}
fifo
while IFS=' ' read -r n m && IFS= read -r d && e= && c=; do
  while IFS= read -r x && [ "$x" != "$n" ]; do e="$e$x$l"; done
  IFS= read -r c; while IFS= read -r x && [ "$x" != "$n" ]; do c="$c$l$x"; done
  # The action. `set --` keeps the marker, setsid, interpreter and command out of reach of the exported
  # snippet, whatever names it sets. `command eval` keeps the loop alive when it cannot fork (the
  # container is out of processes): then the end line says fork-failed, and swerun reports that as the
  # action's output.
  r= x= o=
  if [ -n "$f" ] && { command exec 9>/proc/$$/fd/8; } 2>/dev/null; then
    # fd 9 holds the FIFO open for writing until the action has started, so `cat` cannot see its end before.
    command eval 'SWERUN_OUTPUT_OF=$m cat <&8 >&3 8<&- 9>&- &
      o=$!
      ( set -- "$m" $s "$@" "$c"
        cd "$d" && eval "$e" && SWERUN_ACTION_ID=$1 && shift && export SWERUN_ACTION_ID && exec "$@"
      ) </dev/null >&9 2>&1 3>&- 8<&- 9>&-
      x=$?'
    exec 9>&-
    # A trapped signal ends `wait` early: wait again while `cat` runs.
    y=0
    if [ -n "$o" ]; then
      wait "$o" || y=$?
      while [ "$y" -gt 128 ] && kill -0 "$o" 2>/dev/null; do y=0; wait "$o" || y=$?; done
    fi
    [ "$y" = 0 ] || fifo
    [ -n "$o" ] && [ -n "$x" ] || r=fork-failed
  else
    # fd 4 carries the exit code past the output's pipe into r. When the loop cannot fork, r stays empty
    # and x is empty (the loop could not fork) or 2 (the shell that runs the pipeline could not).
    command eval 'r=$(
      { { ( set -- "$m" $s "$@" "$c"
            cd "$d" && eval "$e" && SWERUN_ACTION_ID=$1 && shift && export SWERUN_ACTION_ID && exec "$@"
          ) </dev/null 2>&1 3>&- 4>&- 8<&-
          echo $? >&4
        } | SWERUN_OUTPUT_OF=$m cat >&3 4>&- 8<&-
      } 4>&1
    ); x=$?'
    [ -z "$r" ] && [ "${x:-2}" = 2 ] && r=fork-failed
  fi
  printf '\n%s %s\n' "$n" "${r:-$x}"
done
if [ -n "$keep" ]; then exec sleep $lifetime; fi
exit 0
