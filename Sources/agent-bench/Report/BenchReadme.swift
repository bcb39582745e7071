/// benchmarks/README.md as `agent-bench --markdown` writes it: what the bench is, the current
/// table (``MarkdownRenderer``) under the commit and machine, and each figure's method as the
/// bench states it — all from one run, so that nothing in the file is copied by hand. The
/// diary of earlier runs is benchmarks/HISTORY.md.
enum BenchReadme {
    /// The first line of the table's file, which ``BenchReadmeTests`` and people look for.
    static let generatedNotice = "<!-- Written by `agent-bench --markdown`: run it again rather than editing this file. -->"

    static func render(_ report: BenchReport) -> String {
        var lines = [
            generatedNotice, "",
            "# Benchmarks", "",
            "`agent-bench` measures the runtime's hot paths against a baseline or floor measured in the same run "
                + "(a bare socketpair, posix_spawn of /bin/true, supervisord, Celery, RQ, APScheduler, procrastinate, "
                + "the bare model call or decode) and prints one table. No figure is asserted anywhere: machines are noisy. "
                + "The diary of earlier runs, named by issue and commit, is [HISTORY.md](HISTORY.md).", "",
            "## Current figures", "",
        ]
        if let caveat = caveat(report) { lines += [caveat, ""] }
        lines += [MarkdownRenderer.render(report), "", "## Reproduce", "",
                  "```sh",
                  "swift build -c release && .build/release/agent-bench --markdown > benchmarks/README.md",
                  "# keep the run: --json > run.json; the table again without measuring: --from-json run.json --markdown",
                  "```", "",
                  "Run it on a quiet machine; the line above the table says how busy the machine was before the run. "
                      + "Figures 9–13 install what they compare with (Debian's wrk, redis-server and postgresql with apt-get, "
                      + "supervisord, Celery, RQ, APScheduler and procrastinate from PyPI into a scratch folder that is removed "
                      + "afterwards); figure 13 needs the default traits (the fleet).", "",
                  "## Method", ""]
        for section in report.sections {
            lines += ["### \(section.number). \(section.title)", "", section.method]
            let others = section.othersCPU.map { String(format: "Other processes used %.0f %% of a core while it ran.", $0) }
            if !section.notes.isEmpty || others != nil {
                lines.append("")
                lines += section.notes.map { "- " + $0 } + (others.map { ["- " + $0] } ?? [])
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// What makes this run's figures not worth quoting, said above its table.
    static func caveat(_ report: BenchReport) -> String? {
        var reasons: [String] = []
        if report.quick { reasons.append("a `--quick` run (fewer repetitions, fewer events, shorter windows)") }
        if report.machine.build != "release" { reasons.append("of a debug build") }
        if let load = report.machine.load, load.busyPercent >= 10 {
            reasons.append(String(format: "on a machine %.0f %% busy with other work", load.busyPercent))
        }
        guard !reasons.isEmpty else { return nil }
        return "**This table is from " + reasons.joined(separator: ", ")
            + ": it shows every figure's shape, not the runtime's speed; a quiet release run replaces it.**"
    }
}
