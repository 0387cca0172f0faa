import Foundation
import Testing
import VTTestSupport

/// Every command of the README, run: the recipes read out of README.md (so a recipe added
/// later is run too), each in a temporary folder of its own, against the test pattern, the
/// stand-in camera at `/dev/video0`, the stand-in microphone for `--audio` and the stand-in
/// VA-API driver for a render node. A command must end with status 0 (or the status
/// `expectedStatus` gives, as the recipe's comment documents it) and leave the files it names.
///
/// What cannot run in a test is listed in `cannotRunHere` with the reason, so the list is in
/// plain sight and anything not on it runs. The rewrites a command goes through before it runs
/// are those of `ReadmeRecipe.Command.rewritten`: shorter recordings, the stand-ins' paths, and a
/// player that shows nothing.
///
/// Recipes that capture from the camera in real time are run by `ReadmeRecipeLiveTests`, nested
/// in `CameraRecordingTests`, whose `.serialized` keeps real-time capture to one at a time; the
/// others run here, side by side.
@Suite struct ReadmeRecipeTests {
    @Test(arguments: try ReadmeRecipe.all().filter { !$0.skipped && !$0.capturesInRealTime })
    func recipeRuns(_ recipe: ReadmeRecipe) throws {
        try recipe.run()
    }

    /// The README's commands are each run or listed as not runnable, and the list holds no
    /// entry that matches nothing.
    @Test func everyCommandIsRunOrListedWithItsReason() throws {
        let recipes = try ReadmeRecipe.all()
        // The recipes are found: the README has a section of them, with sound among them.
        #expect(recipes.filter { $0.section == "Recipes" }.count >= 15, "\(recipes.map(\.title))")
        #expect(recipes.contains { $0.commands.contains { $0.text.contains("--audio C920") } })
        #expect(recipes.contains { $0.capturesInRealTime } && recipes.contains { !$0.capturesInRealTime && !$0.skipped })
        let commands = recipes.flatMap(\.commands)
        for entry in ReadmeRecipe.cannotRunHere {
            #expect(commands.contains { $0.text.hasPrefix(entry.prefix) },
                    "cannotRunHere lists '\(entry.prefix)', which no command of README.md starts with")
        }
        for entry in ReadmeRecipe.expectedStatus {
            #expect(commands.contains { $0.text.hasPrefix(entry.prefix) },
                    "expectedStatus lists '\(entry.prefix)', which no command of README.md starts with")
        }
        // A recipe that could not run at all is only ever made of commands on the list.
        for recipe in recipes where recipe.skipped {
            #expect(recipe.commands.allSatisfy { $0.cannotRunBecause != nil }, "\(recipe.title)")
        }
    }
}

extension CameraRecordingTests {
    /// The README's recipes that capture from the camera in real time.
    @Suite struct ReadmeRecipeLiveTests {
        @Test(arguments: try ReadmeRecipe.all().filter { !$0.skipped && $0.capturesInRealTime })
        func recipeRuns(_ recipe: ReadmeRecipe) throws {
            try recipe.run()
        }
    }
}

extension ReadmeRecipe {
    /// What cannot run in a test, by the start of the command, with the reason.
    static let cannotRunHere: [(prefix: String, reason: String)] = [
        ("make run", "builds the release binary (minutes on two cores) before it records 10 s; "
            + "`make run ARGS=\"…\"`, which runs .build/release/vtrecord with those arguments, is run with the tests' build"),
        ("make test", "runs the whole suite, this test included"),
        ("make install", "installs under /usr/local; InstallTests runs make install and make uninstall into a temporary prefix"),
        ("make uninstall", "removes what make install put under a prefix; InstallTests runs it"),
        ("sudo systemctl", "needs systemd running as the machine's init, and root; InstallTests checks the unit with systemd-analyze"),
        ("journalctl", "reads the journal of the systemd service above"),
    ]

    /// Commands that end with another status than 0, as the recipe's comment says they do, and
    /// what their standard output must name.
    static let expectedStatus: [(prefix: String, status: Int32, output: String?, why: String)] = [
        ("vtrecord verify night-*.mp4", 6, "night-2.mp4: DAMAGED",
         "night-2.mp4 is cut short, as a crash leaves a file, and the comment says 6 for damage"),
        ("vtrecord verify --json night-*.mp4", 6, "\"night-2.mp4\"",
         "the same files; jq names the damaged one, and the pipeline's status is verify's"),
    ]

    /// Runs the commands in order in a folder of their own, with the fixtures they read made
    /// first and the stand-ins they use.
    func run() throws {
        let folder = try TemporaryDirectory()
        let camera = usesCamera ? try FakeCamera(knobs: [.formats(Self.cameraFormats)]) : nil
        let alsa = usesMicrophone ? try FakeALSAConfiguration([Self.microphone]) : nil
        let va = usesRenderNode ? try FakeVADevice() : nil
        var environment = ProcessInfo.processInfo.environment.filter { $0.key != "XDG_CONFIG_HOME" }
        // Presets of the machine's user stay out of it.
        let home = folder.path("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        environment["HOME"] = home
        environment["VTRECORD"] = Tools.vtrecord
        if let camera { environment = try camera.environment(base: environment) }
        if let alsa { environment = alsa.environment(base: environment) }
        if let va { environment = try va.environment(base: environment) }

        let written = Set(commands.flatMap { $0.outputs })
        for (name, make) in Self.fixtures where !written.contains(name) && commands.contains(where: { $0.words.contains(name) }) {
            try make(folder)
        }
        let stand = StandIns(camera: camera?.path, renderNode: va?.devicePath)
        for command in commands {
            if let reason = command.cannotRunBecause {
                print("README recipe '\(title)': not run here: \(command.text): \(reason)")
                continue
            }
            for path in command.absolutePaths where !stand.replaces(path) {
                Issue.record("'\(command.text)' names \(path), outside the recipe's folder: give the test a stand-in for it")
            }
            let script = command.rewritten(stand)
            let shell = "cd '\(folder.url.path)' || exit 97\nvtrecord() { \"$VTRECORD\" \"$@\"; }\nset -o pipefail\n\(script)"
            let r = try ChildProcess.run(["/bin/bash", "-c", shell], environment: environment, timeout: .seconds(90))
            let expected = Self.expectedStatus.first { command.text.hasPrefix($0.prefix) }
            let context = "README recipe '\(title)': \(command.text)\nran as: \(script)\n"
                + (expected.map { "expected status \($0.status): \($0.why)\n" } ?? "") + r.transcript
            try #require(!r.timedOut && r.status == expected?.status ?? 0, "\(context)")
            if let output = expected?.output {
                #expect(r.standardOutputText.contains(output), "\(context)")
            }
            for output in command.outputs {
                let found = try Self.files(matching: output, in: folder.url)
                #expect(!found.isEmpty, "\(context)\nwrote no \(output)")
                for file in found {
                    let size = (try FileManager.default.attributesOfItem(atPath: folder.url.appendingPathComponent(file).path)[.size] as? Int) ?? 0
                    #expect(size > 0, "\(context)\n\(file) is empty")
                }
            }
        }
        if let camera {
            for report in try camera.reports() {
                #expect(report.releasedEverything, "README recipe '\(title)': a process kept the camera: \(report)")
            }
        }
        if let va {
            #expect(try va.report().violations.isEmpty, "README recipe '\(title)'")
        }
    }

    /// The stand-in camera offers one small size in every format, so a recording asking for
    /// 1080p (a preset's) gets it, and says so, as a real camera does.
    static let cameraFormats = "YUYV:320x240@30/15/5;MJPG:320x240@30/15/5;NV12:320x240@30/15/5;YU12:320x240@30/15/5"

    /// A webcam's microphone, by the card name the recipes use; the first microphone is also
    /// ALSA's `default`.
    static let microphone = FakeMicrophone(name: "C920", description: "HD Pro Webcam C920 at usb-0000:00:14.0-1, high speed")

    /// The files recipes read without writing them, made the way a user would have them.
    static let fixtures: [(name: String, make: @Sendable (TemporaryDirectory) throws -> Void)] = [
        ("clip.y4m", { folder in
            try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "30", "-pix_fmt", "yuv420p",
                        folder.path("clip.y4m")])
        }),
        ("in.mp4", { folder in
            try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "30", "-c:v", "libx264",
                        "-pix_fmt", "yuv420p", folder.path("in.mp4")])
        }),
        ("out.h264", { folder in try record(folder.path("out.h264"), ["--frames", "30"]) }),
        // A night's recording: long enough for a picture at 1 min 30 s, at a low rate so it is
        // made in a moment.
        ("night.mp4", { folder in try record(folder.path("night.mp4"), ["--fps", "5", "--duration", "100s"]) }),
        // Two of last night's files, the second cut short in its last fragment, as a crash
        // leaves one.
        ("night-*.mp4", { folder in
            try record(folder.path("night-1.mp4"), ["--duration", "2s"])
            let cut = folder.path("night-2.mp4")
            try record(cut, ["--duration", "2s", "--mp4-fragmented"])
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cut))
            try handle.truncate(atOffset: try handle.seekToEnd() - 3000)
            try handle.close()
        }),
    ]

    private static func ffmpeg(_ arguments: [String]) throws {
        let r = try Tools.run("ffmpeg", ["-v", "error", "-y"] + arguments)
        try #require(r.status == 0, "ffmpeg \(arguments): \(r.stderr)")
    }

    private static func record(_ path: String, _ arguments: [String]) throws {
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--speed", "ultrafast", "--quiet", "-o", path] + arguments)
        try #require(r.status == 0, "vtrecord: \(r.stderr)")
    }

}
