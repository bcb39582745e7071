import Foundation

/// A baseline's Python packages, installed from PyPI at run time into a virtual environment in
/// the bench's scratch folder (nothing of them is committed; pip caches the wheels between runs).
enum PythonVirtualEnvironment {
    /// Creates `folder`/venv and installs `requirements` into it, unless its python is already
    /// there; returns the path of that python. The installer's output goes to
    /// `folder`/install.log, which the errors name.
    static func install(_ requirements: [String], in folder: String) throws -> String {
        let python = folder + "/venv/bin/python"
        guard !FileManager.default.isExecutableFile(atPath: python) else { return python }
        let log = folder + "/install.log"
        let named = requirements.joined(separator: " ")
        Progress.say("installing \(named) from PyPI into \(folder)/venv…")
        guard Shell.run("/usr/bin/env", ["python3", "-m", "venv", folder + "/venv"], log: log) else {
            throw BenchError("python3 -m venv failed (is python3 with venv installed?); see \(log)")
        }
        guard Shell.run(folder + "/venv/bin/pip", ["install", "-q", "--disable-pip-version-check"] + requirements, log: log) else {
            throw BenchError("pip install \(named) failed; see \(log)")
        }
        return python
    }
}
