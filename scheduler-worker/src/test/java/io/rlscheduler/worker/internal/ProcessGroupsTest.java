package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ProcessGroupsTest {

    @Test
    void parsesStatWhoseCommandNameHoldsSpacesAndParentheses() {
        ProcessGroups.Stat stat = ProcessGroups.parseStat("4242 (my (odd) name) S 17 4240 4240 0 -1 4194560 ...");
        assertThat(stat).isNotNull();
        assertThat(stat.getPid()).isEqualTo(4242);
        assertThat(stat.getState()).isEqualTo('S');
        assertThat(stat.getPpid()).isEqualTo(17);
        assertThat(stat.getPgrp()).isEqualTo(4240);
        assertThat(stat.getSession()).isEqualTo(4240);
        assertThat(stat.isExited()).isFalse();
    }

    @Test
    void zombiesCountAsExited() {
        assertThat(ProcessGroups.parseStat("7 (python3) Z 1 7 7 0").isExited()).isTrue();
    }

    @Test
    void malformedStatGivesNull() {
        assertThat(ProcessGroups.parseStat("")).isNull();
        assertThat(ProcessGroups.parseStat("12 (x")).isNull();
        assertThat(ProcessGroups.parseStat("12 (x) S")).isNull();
        assertThat(ProcessGroups.parseStat("12 (x) S 1 2")).isNull();
        assertThat(ProcessGroups.parseStat("abc (x) S 1 2 2")).isNull();
    }

    @Test
    void splitsNulSeparatedText() {
        assertThat(ProcessGroups.splitNul("a\0b c\0\0d\0".getBytes())).containsExactly("a", "b c", "", "d");
        assertThat(ProcessGroups.splitNul(new byte[0])).isEmpty();
    }

    @Test
    void recognisesOurLauncherByItsPgidFile() {
        List<String> argv = List.of("python3", "-u", "/state/launcher.py", "--grace", "10",
                "--pgid-file", "/state/pgids/t1-4.pgid", "--", "python3", "-u", "/srv/train.py");
        assertThat(LeftoverGroups.isLauncher(argv, "t1-4.pgid")).isTrue();
        assertThat(LeftoverGroups.isLauncher(argv, "t1-5.pgid")).isFalse();
        assertThat(LeftoverGroups.isLauncher(argv, "1-4.pgid")).isFalse();
        assertThat(LeftoverGroups.isLauncher(List.of("python3", "/state/launcher.py", "--pgid-file=/s/p/t1-4.pgid"),
                "t1-4.pgid")).isTrue();
    }

    @Test
    void aScriptMentioningThePgidFileAfterTheSeparatorIsNotALauncher() {
        List<String> argv = List.of("python3", "/srv/train.py", "--", "launcher.py", "--pgid-file", "t1-4.pgid");
        assertThat(LeftoverGroups.isLauncher(argv, "t1-4.pgid")).isFalse();
        assertThat(LeftoverGroups.isLauncher(List.of("sleep", "300"), "t1-4.pgid")).isFalse();
        assertThat(LeftoverGroups.isLauncher(List.of(), "t1-4.pgid")).isFalse();
    }
}
