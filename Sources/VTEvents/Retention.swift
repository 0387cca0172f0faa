import Foundation
import Synchronization
import VTCore
import VTOutput

#if canImport(Glibc)
import Glibc
#endif

/// What retention keeps of one template's files (`-o`'s, or the clips'), in its own folder:
/// by total size and by age. Free space is a property of the disk, so it is the janitor's.
public struct RetentionRule: Sendable {
    /// The option the rule came from, for messages: "-o", "--events".
    public var name: String
    public var template: OutputTemplate
    public var device: String
    public var preset: String?
    /// The most the matching files may hold together, in bytes.
    public var keepBytes: Int64?
    /// The oldest a matching file may be, in seconds (by its modification time).
    public var keepSeconds: Double?

    public init(name: String, template: OutputTemplate, device: String, preset: String?,
                keepBytes: Int64?, keepSeconds: Double?) {
        self.name = name
        self.template = template
        self.device = device
        self.preset = preset
        self.keepBytes = keepBytes
        self.keepSeconds = keepSeconds
    }
}

/// `--keep-free`: bytes, or a share of the file system, to keep free.
public enum FreeSpaceTarget: Sendable, Equatable {
    case bytes(Int64)
    case percent(Double)

    func bytes(ofTotal total: Int64) -> Int64 {
        switch self {
        case .bytes(let bytes): bytes
        case .percent(let share): Int64(Double(total) * share / 100)
        }
    }
}

/// What retention deleted.
public struct RetentionReport: Codable, Sendable, Equatable {
    public struct Deletion: Codable, Sendable, Equatable {
        public enum Reason: String, Codable, Sendable {
            case age, size, free
        }

        public var file: String
        public var bytes: Int64
        public var reason: Reason
    }

    public var filesDeleted = 0
    public var bytesFreed: Int64 = 0
    /// The first `listed` deletions.
    public var deleted: [Deletion] = []
    /// Files that could not be deleted (permissions, a folder gone).
    public var failures = 0
    /// Writes that found the disk full and went on once retention had made room.
    public var roomMadeForWrites = 0

    public static let listed = 1000

    public init() {}

    enum CodingKeys: String, CodingKey {
        case filesDeleted = "files_deleted", bytesFreed = "bytes_freed", deleted, failures
        case roomMadeForWrites = "room_made_for_writes"
    }
}

/// Deletes the oldest of each template's files by its rules, and of all of them to keep
/// `--keep-free`: at start (so it works across restarts and reboots), whenever an output file
/// closes, every `interval` seconds for free space, and at once, on the writer's thread, when
/// a write finds the disk full (`OutputFileRegistry`). A file an output holds open is never
/// deleted, nor a template's newest finished file, nor any file its template cannot have made.
///
/// For free space the continuous recording's files go first, oldest first, then the clips':
/// the clips are what was kept because something happened.
public final class RetentionJanitor: Sendable {
    private struct State {
        var report = RetentionReport()
        var running = true
        var poked = false
    }

    public let rules: [RetentionRule]
    public let keepFree: FreeSpaceTarget?
    private let state = Mutex(State())
    /// Serializes sweeps: the janitor's thread and a writer finding the disk full.
    private let sweeping = Mutex(())
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let say: @Sendable (String) -> Void
    private let interval: Double

    /// How many deletions are said one by one; the rest are counted in the summary.
    static let saidOneByOne = 10

    public init(rules: [RetentionRule], keepFree: FreeSpaceTarget?, interval: Double = 2,
                say: @escaping @Sendable (String) -> Void) {
        self.rules = rules
        self.keepFree = keepFree
        self.interval = interval
        self.say = say
    }

    public var report: RetentionReport { state.withLock { $0.report } }

    /// "deleted 12 files (1.2 GB)", for the status line; nil before the first.
    public var statusNote: String? {
        let report = self.report
        guard report.filesDeleted > 0 else { return nil }
        return "deleted \(report.filesDeleted) file\(report.filesDeleted == 1 ? "" : "s") (\(formatByteSize(report.bytesFreed)))"
    }

    /// Sweeps once now, then starts the janitor's thread (`vtrecord-keep`) and watches the
    /// output files.
    public func start() {
        sweep()
        OutputFileRegistry.shared.observe(closed: { [weak self] in self?.poke() },
                                          full: { [weak self] path in self?.makeRoom(for: path) ?? false })
        Thread.start(named: "vtrecord-keep") { [self] in
            while state.withLock({ $0.running }) {
                _ = wake.wait(timeout: .now() + .milliseconds(Int(interval * 1000)))
                guard state.withLock({ state in
                    state.poked = false
                    return state.running
                }) else { break }
                sweep()
            }
            ended.signal()
        }
    }

    /// Sweeps a last time (the last files are closed by now) and ends the thread.
    public func stop() {
        OutputFileRegistry.shared.observe(closed: nil, full: nil)
        state.withLock { $0.running = false }
        wake.signal()
        ended.wait()
        sweep()
    }

    private func poke() {
        let first = state.withLock { state in
            defer { state.poked = true }
            return !state.poked
        }
        if first { wake.signal() }
    }

    // MARK: sweeping

    struct Candidate {
        let path: String
        let bytes: Int64
        let modified: Double
        let rule: Int
    }

    /// The files each rule's template made, oldest first, with the open ones apart.
    func candidates() -> (deletable: [[Candidate]], openBytes: [Int64]) {
        var deletable: [[Candidate]] = []
        var openBytes: [Int64] = []
        for (index, rule) in rules.enumerated() {
            var files: [Candidate] = []
            var open: Int64 = 0
            if let directory = rule.template.fixedDirectory,
               let pattern = rule.template.fileNamePattern(device: rule.device, preset: rule.preset),
               let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
                for name in names where (try? pattern.wholeMatch(in: name)) != nil {
                    let path = directory == "." ? name : directory + "/" + name
                    var info = stat()
                    guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
                    if OutputFileRegistry.shared.isOpen(path) {
                        open += Int64(info.st_size)
                        continue
                    }
                    let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
                    files.append(Candidate(path: path, bytes: Int64(info.st_size), modified: modified, rule: index))
                }
            }
            deletable.append(files.sorted { ($0.modified, $0.path) < ($1.modified, $1.path) })
            openBytes.append(open)
        }
        return (deletable, openBytes)
    }

    /// One pass of every rule, then free space. Each template's newest finished file stays
    /// whatever the rules say, as the open ones do: it is what was just recorded (a recording
    /// that ends in one file bigger than `--keep-size` keeps it).
    public func sweep() {
        sweeping.withLock { _ in
            var (files, openBytes) = candidates()
            for index in files.indices where !files[index].isEmpty {
                openBytes[index] += files[index].removeLast().bytes
            }
            let now = Date().timeIntervalSince1970
            for (index, rule) in rules.enumerated() {
                if let age = rule.keepSeconds {
                    while let oldest = files[index].first, oldest.modified < now - age {
                        files[index].removeFirst()
                        delete(oldest, .age)
                    }
                }
                if let limit = rule.keepBytes {
                    var total = openBytes[index] + files[index].reduce(0) { $0 + $1.bytes }
                    while total > limit, let oldest = files[index].first {
                        files[index].removeFirst()
                        total -= oldest.bytes
                        delete(oldest, .size)
                    }
                }
            }
            freeSpace(&files, least: 0)
        }
    }

    /// A write found the disk under `path` full: frees what `--keep-free` asks, and at least
    /// one file. Whether anything was deleted.
    func makeRoom(for path: String) -> Bool {
        guard keepFree != nil else { return false }
        return sweeping.withLock { _ in
            var (files, _) = candidates()
            for index in files.indices where !files[index].isEmpty { files[index].removeLast() }
            let before = state.withLock { $0.report.filesDeleted }
            freeSpace(&files, least: 1, on: Self.device(of: path))
            return state.withLock { state in
                guard state.report.filesDeleted > before else { return false }
                state.report.roomMadeForWrites += 1
                return true
            }
        }
    }

    /// Deletes the oldest files, the recording's before the clips', while a file system holding
    /// them has less free than `--keep-free`; at least `least` on the device `only` when given.
    private func freeSpace(_ files: inout [[Candidate]], least: Int, on only: UInt64? = nil) {
        guard let keepFree else { return }
        var deleted = 0
        for index in files.indices {
            while let oldest = files[index].first {
                guard let space = Self.space(at: oldest.path) else { break }
                if let only, space.device != only { break }
                guard space.available < keepFree.bytes(ofTotal: space.total) || deleted < least else { break }
                files[index].removeFirst()
                delete(oldest, .free)
                deleted += 1
            }
        }
    }

    private func delete(_ file: Candidate, _ reason: RetentionReport.Deletion.Reason) {
        do {
            try systemCall("unlink") { unlink(file.path) }
        } catch where error.errno == ENOENT {
            return
        } catch {
            state.withLock { $0.report.failures += 1 }
            say("could not delete \(file.path) to keep \(rules[file.rule].name)'s files within bounds: \(error.reason); it stays")
            return
        }
        let count: Int = state.withLock { state in
            state.report.filesDeleted += 1
            state.report.bytesFreed += file.bytes
            if state.report.deleted.count < RetentionReport.listed {
                state.report.deleted.append(.init(file: file.path, bytes: file.bytes, reason: reason))
            }
            return state.report.filesDeleted
        }
        if count <= Self.saidOneByOne {
            let why = switch reason {
            case .age: "older than the age kept"
            case .size: "over the size kept"
            case .free: "to keep disk space free"
            }
            say("deleted \(file.path) (\(formatByteSize(file.bytes)), \(why))"
                + (count == Self.saidOneByOne ? "; further deletions are counted in the summary" : ""))
        }
    }

    /// The file system holding `path`: its device, size and the bytes an unprivileged writer may use.
    static func space(at path: String) -> (device: UInt64, total: Int64, available: Int64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0, let device = device(of: path) else { return nil }
        let unit = Int64(info.f_frsize)
        return (device, Int64(info.f_blocks) * unit, Int64(info.f_bavail) * unit)
    }

    static func device(of path: String) -> UInt64? {
        var info = stat()
        if stat(path, &info) == 0 { return UInt64(info.st_dev) }
        let directory = (path as NSString).deletingLastPathComponent
        guard stat(directory.isEmpty ? "." : directory, &info) == 0 else { return nil }
        return UInt64(info.st_dev)
    }
}
