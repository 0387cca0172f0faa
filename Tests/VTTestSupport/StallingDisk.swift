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
    private let peer: ReportingPeer<Counts>

    /// Mounts the stalling file system at `mountPoint` (an empty folder) over `backing`.
    /// Returns once it is mounted.
    public init(backing: String, mountPoint: String, stall: Duration, readyWithin: Duration = .seconds(10)) throws {
        self.mountPoint = mountPoint
        peer = try ReportingPeer(
            name: "stalling disk",
            arguments: ["/usr/bin/python3", CBuild.path("Tests/Peers/stalling_disk.py"), "--backing", backing,
                        "--mount", mountPoint, "--stall-ms", String(Int(stall / .milliseconds(1)))],
            ready: "mounted", readyWithin: readyWithin,
            notReady: { PeerError.noReport(peer: "stalling disk", log: $0) },
            // A file system whose server was killed stays mounted, unusable, until detached.
            cleanUp: { Self.detach(mountPoint) })
    }

    private static func detach(_ mountPoint: String) {
        let umount = Process()
        umount.executableURL = URL(fileURLWithPath: "/usr/bin/umount")
        umount.arguments = ["-l", mountPoint]
        umount.standardError = FileHandle.nullDevice
        try? umount.run()
        umount.waitUntilExit()
    }

    /// Unmounts (SIGTERM) and returns what was made to wait.
    public func stop() throws -> Counts { try peer.stop() }
}
