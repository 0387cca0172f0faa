import Foundation
import Testing

/// `make install` and `make uninstall` into a temporary prefix, as someone installing into
/// `$HOME/.local` or a packager would run them, and the installed files used as a user would.
@Suite struct InstallTests {
    /// What `make install PREFIX=…` is expected to put under the prefix.
    struct InstalledFiles {
        let prefix: String

        var binary: String { "\(prefix)/bin/vtrecord" }
        var manPage: String { "\(prefix)/share/man/man1/vtrecord.1" }
        var bashCompletion: String { "\(prefix)/share/bash-completion/completions/vtrecord" }
        var zshCompletion: String { "\(prefix)/share/zsh/site-functions/_vtrecord" }
        var fishCompletion: String { "\(prefix)/share/fish/vendor_completions.d/vtrecord.fish" }
        var systemdUnit: String { "\(prefix)/lib/systemd/system/vtrecord@.service" }
        var presetDirectory: String { "\(prefix)/share/vtrecord/presets" }
    }

    /// One test for the whole round trip: uninstall needs what install left.
    @Test(.timeLimit(.minutes(20)))
    func installUnderPrefixWorksAndUninstallRemovesEverything() throws {
        let dir = try TemporaryDirectory()
        let installed = InstalledFiles(prefix: dir.url.path)

        let install = try Self.make(["install", "PREFIX=\(installed.prefix)"])
        try #require(install.status == 0, "make install: exit \(install.status)\n\(install.stdoutText)\n\(install.stderr)")

        try checkBinary(installed)
        try checkManPage(installed)
        try checkCompletions(installed)
        try checkSystemdUnit(installed)
        try checkInstalledPresets(installed)

        let uninstall = try Self.make(["uninstall", "PREFIX=\(installed.prefix)"])
        #expect(uninstall.status == 0, "make uninstall: exit \(uninstall.status)\n\(uninstall.stderr)")
        let left = try Self.files(under: dir.url)
        #expect(left.isEmpty, "make uninstall left \(left)")
    }

    /// The installed binary runs on its own and is the one just built.
    func checkBinary(_ installed: InstalledFiles) throws {
        #expect(FileManager.default.isExecutableFile(atPath: installed.binary))
        let version = try Tools.run(installed.binary, ["--version"])
        #expect(version.status == 0, "\(installed.binary) --version: \(version.stderr)")
        #expect(version.stdoutText == (try Tools.vtrecord(["--version"])).stdoutText)
        // --http is served by the binary alone, beside nothing of the build.
        let served = try Tools.run(installed.binary, ["--test-pattern", "--size", "160x120", "--frames", "15",
                                                      "--http", "127.0.0.1:0", "-o", "\(installed.prefix)/served.mp4"])
        #expect(served.status == 0 && served.stderr.contains("serving the live view on http://127.0.0.1:"),
                "the installed vtrecord --http: \(served.stderr)")
        try? FileManager.default.removeItem(atPath: "\(installed.prefix)/served.mp4")
    }

    /// man-db renders the installed page as `man -l` does for a user.
    func checkManPage(_ installed: InstalledFiles) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["MANPAGER"] = "cat"
        environment["MANWIDTH"] = "80"
        let man = try Tools.run("man", ["-l", installed.manPage], environment: environment)
        #expect(man.status == 0, "man -l \(installed.manPage): \(man.stderr)")
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "PRESETS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"] {
            #expect(man.stdoutText.contains("\n\(heading)\n"), "man -l shows no \(heading) section")
        }
        #expect(man.stdoutText.contains("--json-summary"))
    }

    /// The three completion scripts are there, and bash's parses.
    func checkCompletions(_ installed: InstalledFiles) throws {
        for path in [installed.bashCompletion, installed.zshCompletion, installed.fishCompletion] {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(size > 0, "\(path) is missing or empty")
        }
        let bash = try Tools.run("bash", ["-n", installed.bashCompletion])
        #expect(bash.status == 0, "bash -n \(installed.bashCompletion): \(bash.stderr)")
        let zsh = try String(contentsOfFile: installed.zshCompletion, encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef vtrecord"))
        let fish = try String(contentsOfFile: installed.fishCompletion, encoding: .utf8)
        #expect(fish.contains("complete -c 'vtrecord'") || fish.contains("complete -c vtrecord"))
        // Completions come from the installed binary's own command tree.
        let bashText = try String(contentsOfFile: installed.bashCompletion, encoding: .utf8)
        for word in ["--json-summary", "--rate-control", "inspect", "encoders", "verify"] {
            #expect(bashText.contains(word), "bash completion does not offer \(word)")
        }
    }

    /// The unit names the installed binary, and systemd accepts it.
    func checkSystemdUnit(_ installed: InstalledFiles) throws {
        let unit = try String(contentsOfFile: installed.systemdUnit, encoding: .utf8)
        #expect(!unit.contains("@PREFIX@"))
        #expect(unit.contains("ExecStart=\(installed.binary) --preset %i"))
        for line in ["KillSignal=SIGINT", "Restart=on-failure", "StateDirectory=vtrecord",
                     "SupplementaryGroups=video render"] {
            #expect(unit.contains("\n\(line)\n"), "the unit lacks \(line)")
        }
        // systemd-analyze checks the syntax, the specifiers and that ExecStart is executable;
        // it looks the Documentation= page up with man.
        if let analyze = Self.which("systemd-analyze") {
            var environment = ProcessInfo.processInfo.environment
            environment["MANPATH"] = "\(installed.prefix)/share/man"
            let unitDirectory = URL(fileURLWithPath: installed.systemdUnit).deletingLastPathComponent()
            let verify = try Tools.run(analyze, ["verify", "vtrecord@720p30.service"], cwd: unitDirectory,
                                       environment: environment)
            #expect(verify.status == 0 && verify.stderr.isEmpty && verify.stdout.isEmpty,
                    "systemd-analyze verify: \(verify.stdoutText)\(verify.stderr)")
        }
    }

    /// Every preset file of the source tree is installed unchanged, and the installed binary
    /// finds them there (PREFIX/share/vtrecord/presets, ahead of its built-in copies) when the
    /// user has none of their own.
    func checkInstalledPresets(_ installed: InstalledFiles) throws {
        let source = DocumentationTests.root.appendingPathComponent("presets")
        let shipped = try FileManager.default.contentsOfDirectory(atPath: source.path)
            .filter { $0.hasSuffix(".toml") }.sorted()
        try #require(shipped.count >= 7, "presets/ holds \(shipped)")
        for name in shipped {
            let copy = FileManager.default.contents(atPath: "\(installed.presetDirectory)/\(name)")
            #expect(copy == FileManager.default.contents(atPath: source.appendingPathComponent(name).path),
                    "\(name) is not installed in \(installed.presetDirectory)")
        }

        let emptyConfig = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = emptyConfig.url.path
        let list = try Tools.run(installed.binary, ["presets", "list", "--json"], environment: environment)
        try #require(list.status == 0, "installed vtrecord presets list: \(list.stderr)")
        struct Listed: Decodable {
            var name: String
            var source: String
            var path: String?
        }
        let listed = try JSONDecoder().decode([Listed].self, from: list.stdout)
        for file in shipped {
            let name = String(file.dropLast(".toml".count))
            let entry = listed.first { $0.name == name }
            #expect(entry?.source == "file" && entry?.path == "\(installed.presetDirectory)/\(file)",
                    "installed vtrecord presets list shows \(name) as \(String(describing: entry))")
        }
    }

    /// make in the package root, at low priority, installing the build the tests already made
    /// (CONFIG=test): the layout is what is tested, and an optimized build of the whole
    /// package with SwiftNIO and Hummingbird took 13 minutes here beside the other tests.
    ///
    /// The `swift test` running this test holds SwiftPM's lock on .build until it ends, so a
    /// plain `swift build` here would wait for it forever. Ignoring the lock is safe at this
    /// point: the tests are built and nothing else builds while they run.
    static func make(_ arguments: [String]) throws -> ProcessResult {
        try Tools.run("nice", ["-n", "19", "make", "--no-print-directory"] + arguments
                      + ["SWIFT_BUILD_FLAGS=--ignore-lock", "CONFIG=test"],
                      cwd: DocumentationTests.root)
    }

    /// Regular files and links under `directory`, relative to it.
    static func files(under directory: URL) throws -> [String] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isDirectoryKey]) else {
            return []
        }
        var found: [String] = []
        for case let url as URL in walker where (try url.resourceValues(forKeys: [.isDirectoryKey])).isDirectory != true {
            found.append(String(url.path.dropFirst(directory.path.count)))
        }
        return found.sorted()
    }

    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
