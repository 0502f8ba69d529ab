# The browser's watchdog (POSIX sh, Linux /proc). Arguments: the profile folder. Standard input:
# the read end of a pipe whose write end only the process that owns the browser holds.
#
# It waits until that pipe closes, which happens when the owner closes the browser, drops it, or
# dies in any way (SIGKILL included: the kernel closes a dead process's files). Then it ends every
# process of the browser, removes the profile folder and exits. With standard input at end of file
# from the start it cleans up at once (the sweep of a dead owner's folder).

profile=$1
# The signal that ends the owner (Ctrl-C, a hang-up, a TERM) must not end its cleaner too.
trap '' HUP INT QUIT TERM
while read -r _; do :; done

# Every live process of the browser: those that name the profile in their command line (the
# launcher and the browser) or carry it in their environment (the browser and its crash handlers),
# and all their descendants (zygotes, renderers, GPU and utility processes). Zombies are dead.
# The patterns come on grep's standard input, so that grep never matches its own command line.
browser_processes() {
    found=' '
    live=
    for file in $( {
        printf '%s\n' "--user-data-dir=$profile" | grep -lzxF -f - /proc/[0-9]*/cmdline
        printf '%s\n' "SAFFRON_BROWSER_PROFILE=$profile" | grep -lzxF -f - /proc/[0-9]*/environ
    } 2>/dev/null); do
        pid=${file#/proc/}
        found="$found${pid%/*} "
    done
    [ "$found" = ' ' ] && return
    table=$(for stat in /proc/[0-9]*/stat; do
        read -r line <"$stat" || continue
        pid=${stat#/proc/}
        # After the command name, which may hold spaces and parentheses: state, parent, ...
        set -- ${line##*\) }
        echo "${pid%/stat} $2 $1"
    done 2>/dev/null)
    grew=1
    while [ -n "$grew" ]; do
        grew=
        while read -r pid parent state; do
            case $found in *" $pid "*) continue ;; esac
            case $found in *" $parent "*) found="$found$pid " grew=1 ;; esac
        done <<EOF
$table
EOF
    done
    while read -r pid parent state; do
        [ "$pid" = $$ ] && continue
        case $state in Z | X) continue ;; esac
        case $found in *" $pid "*) live="$live $pid" ;; esac
    done <<EOF
$table
EOF
}

# Whether a process still runs: a zombie has ended.
running() {
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    set -- ${line##*\) }
    case $1 in Z | X) return 1 ;; esac
}

killed=
rounds=0
while [ $rounds -lt 250 ]; do
    browser_processes
    # A killed process may take a moment to die; once its parent has, it is no one's descendant.
    dying=
    for pid in $killed; do
        running "$pid" && dying="$dying $pid"
    done
    [ -z "$live$dying" ] && break
    if [ -n "$live" ]; then
        # Frozen first, so that none forks a child in between; looked up again, then killed together.
        kill -STOP $live 2>/dev/null
        browser_processes
        kill -KILL $live 2>/dev/null
        killed="$killed $live"
    fi
    rounds=$((rounds + 1))
    sleep 0.02
done
rm -rf -- "$profile" 2>/dev/null || { sleep 0.2; rm -rf -- "$profile" 2>/dev/null; }
