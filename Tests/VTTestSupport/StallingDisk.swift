import Foundation

/// Tests/Peers/stalling_disk.py run by a test: a folder on a FUSE file system that keeps its
/// files in a backing folder, but makes every fsync/fdatasync and every unlink wait `stall`
/// first, as a busy or slow disk does (an SD card, a device discarding a deleted file's blocks).
///
/// Not for use from several threads at once.
public final class StallingDisk {
    /// What the file system made wait.
    public struct Counts: Sendable, Equatable, Decodable, CustomStringConvertible {
        public var syncs: Int
        public var unlinks: Int
        public var description: String { "\(syncs) syncs and \(unlinks) unlinks stalled" }
    }

    /// Where files go through the stalling file system.
    public let mountPoint: String
    private let child: ChildProcess
    private var counts: Counts?

    /// Mounts the stalling file system at `mountPoint` (an empty folder) over `backing`.
    /// Returns once it is mounted.
    public init(backing: String, mountPoint: String, stall: Duration, readyWithin: Duration = .seconds(10)) throws {
        self.mountPoint = mountPoint
        child = try ChildProcess(
            ["/usr/bin/python3", CBuild.path("Tests/Peers/stalling_disk.py"), "--backing", backing,
             "--mount", mountPoint, "--stall-ms", String(Int(stall / .milliseconds(1)))],
            environment: ProcessInfo.processInfo.environment, signalsUnblocked: true)
        guard child.waitForStandardError(containing: "mounted", timeout: readyWithin) else {
            child.send(SIGKILL)
            let result = child.wait(timeout: .seconds(2))
            Self.detach(mountPoint)
            throw PeerError.noReport(peer: "stalling disk", log: result.transcript)
        }
    }

    deinit {
        if counts == nil && child.isRunning {
            child.send(SIGKILL)
            _ = child.wait(timeout: .seconds(2))
            Self.detach(mountPoint)
        }
    }

    /// A file system whose server was killed stays mounted, unusable, until detached.
    private static func detach(_ mountPoint: String) {
        let umount = Process()
        umount.executableURL = URL(fileURLWithPath: "/usr/bin/umount")
        umount.arguments = ["-l", mountPoint]
        umount.standardError = FileHandle.nullDevice
        try? umount.run()
        umount.waitUntilExit()
    }

    /// Unmounts (SIGTERM) and returns what was made to wait.
    public func stop() throws -> Counts {
        if let counts { return counts }
        if child.isRunning { child.send(SIGTERM) }
        let result = child.wait(timeout: .seconds(5))
        guard let line = result.standardOutputText.split(separator: "\n").last,
              let counts = try? JSONDecoder().decode(Counts.self, from: Data(line.utf8)) else {
            Self.detach(mountPoint)
            throw PeerError.noReport(peer: "stalling disk", log: result.transcript)
        }
        self.counts = counts
        return counts
    }
}
