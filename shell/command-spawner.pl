# swerun's command spawner: starts a swerun process's local commands, so that a command costs a fork of
# this small process instead of a fork of the whole Node process; and its watchdog, which kills what the
# commands left running once that process is gone, even when it died by SIGKILL. Core Perl only (Debian's
# perl-base): no module is loaded. See src/environments/command-spawner.ts for the other side.
#
# swerun starts it as `perl command-spawner.pl <prefix>` in a session of its own, with pipes on its stdin
# and stdout. Requests, on stdin:
#   "r<id> <bytes>\n" then <bytes> of NUL-terminated fields: cwd, file, the argument count, the arguments
#       (argv[0] first), the variables as NAME=value; run that command;
#   "d<id>\n": stop reading the command's output (a killed command whose output someone still holds);
#   "+<pid>\n", "-<pid>\n": a command swerun spawned itself has started, has ended;
#   "\n": check for ended commands now.
# Answers, on stdout:
#   "s<id> <pid>\n": it started (its program was exec'd); "f<id> <stage> <errno>\n": it did not (the
#       cwd or the exec failed; nothing ran);
#   "o<id> <bytes>\n" then that many bytes of its output (stdout and stderr, one pipe, in write order);
#   "e<id>\n": the output ended (every process holding it closed it); "x<id> <wait status>\n": it ended.
# Every command gets a process group of its own (setpgid before exec), stdin from /dev/null, the default
# signal dispositions, and exactly the variables of its request (SWERUN_PROCESS_TAG=<prefix>... among them).
#
# When stdin closes (swerun ended, however it ended), it freezes (SIGSTOP) the process groups of the
# commands still running and every process whose environment carries the prefix (with the group it leads,
# if it leads one), scans /proc again until it finds no new one (a tree that forks meanwhile is caught
# whole), kills them all (SIGKILL), and exits.

use strict;

# Ctrl-C, a closed terminal or a signal to swerun's process group must not end the watchdog before swerun.
# Handlers, not ignored signals: exec resets a handler to the default, so the commands get the defaults.
$SIG{$_} = sub { } for qw(INT HUP TERM QUIT PIPE);
# A handler (not the default) so that select returns when a child ends.
$SIG{CHLD} = sub { };
my $prefix = $ARGV[0] // '';
my $WNOHANG = 1;
my $TAG = 'SWERUN_PROCESS_TAG=';

my %pid_of;       # id -> pid, while it runs
my %id_of;        # pid -> id
my %output;       # id -> read end of its output pipe
my %direct;       # pid -> 1: commands swerun spawned itself
my $input = '';
open my $devnull, '<', '/dev/null' or die;
binmode STDIN;
binmode STDOUT;

# Answers are held until a command is done (its output ended and it exited), one did not start, 64 KiB
# of output wait, or the oldest waited $HOLD seconds: a short command costs swerun one wake-up.
my $answers = '';
my $HOLD = 0.02;
my ($held_since, $due) = (0, 0);
my %half_done;    # id -> 1: its output ended or its process exited, not both yet
sub say_ {
  $held_since = monotonic() // 0 if $answers eq '';
  $answers .= $_[0];
  $due = 1 if $_[1] || length($answers) >= 65536;
}
sub done_half {
  my ($id) = @_;
  if (delete $half_done{$id}) { $due = 1 } else { $half_done{$id} = 1 }
}
# Seconds since boot, to 10 ms (/proc/uptime: no module to load); undef without /proc (answers go at once).
sub monotonic {
  open my $fh, '<', '/proc/uptime' or return undef;
  my ($up) = split ' ', scalar <$fh>;
  return $up;
}
sub hold_for {
  return undef if $answers eq '';
  return 0 if $due;
  my $now = monotonic();
  return 0 unless defined $now;
  my $left = $held_since + $HOLD - $now;
  return $left > 0 ? $left : 0;
}
sub flush {
  my $off = 0;
  while ($off < length $answers) {
    my $n = syswrite STDOUT, $answers, length($answers) - $off, $off;
    if (!defined $n) { next if $!{EINTR}; watchdog() }
    $off += $n;
  }
  $answers = '';
  $due = 0;
}

sub start {
  my ($id, $payload) = @_;
  my @fields = split /\0/, $payload, -1;
  pop @fields;
  my ($cwd, $file, $argc) = splice @fields, 0, 3;
  my @argv = splice @fields, 0, $argc;
  # The command's variables are set here, before the fork, so that the child (whose every write to this
  # process's memory costs a page copy) only changes folder, files and process group, and execs.
  %ENV = ();
  for (@fields) { my $at = index $_, '='; $ENV{substr $_, 0, $at} = substr $_, $at + 1 }
  pipe my $read, my $write or return say_("f$id pipe " . ($! + 0) . "\n", 1);
  pipe my $err_read, my $err_write or return say_("f$id pipe " . ($! + 0) . "\n", 1);
  my $pid = fork;
  if (!defined $pid) { return say_("f$id fork " . ($! + 0) . "\n", 1) }
  if ($pid == 0) {
    setpgrp 0, 0;
    my $stage = 'cwd';
    if (chdir $cwd) {
      $stage = 'exec';
      open STDIN, '<&', $devnull;
      open STDOUT, '>&', $write;
      open STDERR, '>&', $write;
      exec { $file } @argv;
    }
    syswrite $err_write, "$stage " . ($! + 0);
    kill 'KILL', $$;
  }
  close $write; close $err_write;
  my $why = '';
  while (1) { my $n = sysread $err_read, $why, 64, length $why; last if defined $n && $n == 0; last if !defined $n && !$!{EINTR}; }
  close $err_read;
  if ($why ne '') {
    waitpid $pid, 0;
    close $read;
    return say_("f$id $why\n", 1);
  }
  $pid_of{$id} = $pid;
  $id_of{$pid} = $id;
  $output{$id} = $read;
  say_("s$id $pid\n");
}

sub reap_children {
  while ((my $pid = waitpid -1, $WNOHANG) > 0) {
    my $id = delete $id_of{$pid};
    next unless defined $id;
    delete $pid_of{$id};
    say_("x$id $?\n");
    done_half($id);
  }
}

# Reads what the command's output holds, and its end when that follows at once (a few reads at most, so
# that one command cannot hold up the others).
sub read_output {
  my ($id) = @_;
  my $fh = $output{$id};
  for (1 .. 4) {
    my $n = sysread $fh, my $chunk, 65536;
    return if !defined $n && $!{EINTR};
    if (!$n) {
      close $fh;
      delete $output{$id};
      say_("e$id\n");
      return done_half($id);
    }
    say_("o$id $n\n$chunk");
    my $bits = '';
    vec($bits, fileno $fh, 1) = 1;
    return unless select($bits, undef, undef, 0) > 0;
  }
}

sub requests {
  for (;;) {
    if ($input =~ /\A([-+])(\d+)\n/) {
      if ($1 eq '+') { $direct{$2} = 1 } else { delete $direct{$2} }
    } elsif ($input =~ /\Ad(\d+)\n/) {
      if (my $fh = delete $output{$1}) { close $fh }
    } elsif ($input =~ /\Ar(\d+) (\d+)\n/) {
      my ($id, $bytes, $head) = ($1, $2, length $&);
      return if length($input) < $head + $bytes;
      start($id, substr $input, $head, $bytes);
      substr($input, 0, $head + $bytes) = '';
      next;
    } elsif ($input =~ /\A\n/) {
    } else {
      return;
    }
    substr($input, 0, length $&) = '';
  }
}

sub tagged {
  my @found;
  opendir my $proc, '/proc' or return ();
  for my $pid (grep { /\A\d+\z/ } readdir $proc) {
    next if $pid == $$;
    open my $fh, '<', "/proc/$pid/environ" or next;
    local $/;
    my $env = <$fh>;
    push @found, $pid if defined $env && index("\0$env", "\0$TAG$prefix") >= 0;
  }
  return @found;
}

# swerun is gone: kill what its commands left.
sub watchdog {
  my @groups = (values %pid_of, keys %direct);
  kill 'STOP', -$_ for @groups;
  my %stopped;
  for (1 .. 100) {
    my @fresh = grep { !$stopped{$_} } tagged();
    last unless @fresh;
    kill 'STOP', @fresh;
    # And the group each leads, if it leads one: its members may lack the tag (`env -i`).
    kill 'STOP', -$_ for @fresh;
    $stopped{$_} = 1 for @fresh;
  }
  kill 'KILL', -$_ for @groups, keys %stopped;
  kill 'KILL', keys %stopped if %stopped;
  exit 0;
}

for (;;) {
  reap_children();
  my $wait = hold_for();
  if (defined $wait && $wait == 0) { flush(); $wait = undef }
  my $bits = '';
  vec($bits, fileno STDIN, 1) = 1;
  vec($bits, fileno $output{$_}, 1) = 1 for keys %output;
  # A child that ends between the reap above and select's start is seen within the timeout.
  $wait = 0.1 if %pid_of && (!defined $wait || $wait > 0.1);
  my $found = select my $ready = $bits, undef, undef, $wait;
  next if $found <= 0;
  for my $id (keys %output) { read_output($id) if vec $ready, fileno $output{$id}, 1 }
  if (vec $ready, fileno STDIN, 1) {
    my $n = sysread STDIN, $input, 65536, length $input;
    next if !defined $n && $!{EINTR};
    watchdog() if !$n;
    requests();
  }
}
