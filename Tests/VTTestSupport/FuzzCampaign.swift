import Foundation

/// An input that broke a promise: the parser crashed, hung, or answered in a way its contract
/// rules out. Saved to a file so it can be replayed and turned into a regression test.
public struct FuzzFinding: CustomStringConvertible, Sendable {
    public let target: String
    public let seed: UInt64
    public let iteration: Int
    public let mutations: [Mutator.Mutation]
    public let problem: String
    public let savedAs: String?

    public var description: String {
        "\(target), seed \(seed), iteration \(iteration) (\(mutations.map(\.rawValue).joined(separator: "+"))): "
            + "\(problem)\(savedAs.map { "; input saved as \($0)" } ?? "")"
    }
}

/// Where inputs that broke something are kept: FUZZ_ARTIFACTS, or .build/fuzz-artifacts in
/// the package (git-ignored, and kept between runs so a crash can be looked at afterwards).
public enum FuzzArtifacts {
    public static var directory: String {
        ProcessInfo.processInfo.environment["FUZZ_ARTIFACTS"] ?? CBuild.path(".build/fuzz-artifacts")
    }

    /// Inputs saved per run at most.
    public static let savedPerRun = 10

    /// Writes `input` as `name` in the directory and returns its path, or nil when it cannot.
    public static func save(_ input: [UInt8], as name: String) -> String? {
        let path = (directory as NSString).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(input).write(to: URL(fileURLWithPath: path))
            return path
        } catch {
            return nil
        }
    }
}

/// A bounded, seeded fuzz run of a parser inside the test process: the corpus as given, then
/// `iterations` mutated inputs.
///
/// A parser that traps takes the test process with it, so before each input is tried it is
/// written to `<target>.in-progress` in the artifacts directory; the file is removed when the
/// run ends normally, and the next run renames a leftover one to a crash file and says so.
/// Each input is timed: one that takes longer than `slowInput` is reported as a hang. The
/// inputs are at most 64 KiB and take milliseconds; the limit leaves room for a loaded machine
/// and for ThreadSanitizer, which makes them several times slower.
public struct FuzzCampaign {
    public let target: String
    public let seed: UInt64
    public let iterations: Int
    public var slowInput: Duration = .seconds(10)
    private var mutator: Mutator

    public init(target: String, corpus: [[UInt8]], tokens: [[UInt8]] = [], iterations: Int,
                maximumSize: Int = 1 << 16) {
        self.target = target
        seed = FuzzSeed.seed(for: target)
        self.iterations = FuzzSeed.iterations(iterations)
        mutator = Mutator(seed: seed, corpus: corpus, tokens: tokens, maximumSize: maximumSize)
    }

    /// Runs `body` on every input; `body` returns what is wrong with the parser's answer, or nil.
    public mutating func run(_ body: ([UInt8]) -> String?) -> [FuzzFinding] {
        let breadcrumb = Breadcrumb(target: target)
        defer { breadcrumb.remove() }
        var findings: [FuzzFinding] = []
        let clock = ContinuousClock()
        let start = clock.now
        let seeds = mutator.corpus.map { (input: $0, mutations: [Mutator.Mutation]()) }
        for iteration in 0..<seeds.count + iterations {
            let (input, mutations) = iteration < seeds.count ? seeds[iteration] : mutator.next()
            breadcrumb.record(input)
            var problem: String?
            let elapsed = clock.measure { problem = body(input) }
            if problem == nil && elapsed > slowInput { problem = "took \(elapsed) (a hang?)" }
            if let problem {
                // The first few are enough to work from; a broken reader can fail on most inputs.
                let saved = findings.count < FuzzArtifacts.savedPerRun
                    ? FuzzArtifacts.save(input, as: "\(target)-\(seed)-\(iteration).bin") : nil
                findings.append(FuzzFinding(target: target, seed: seed, iteration: iteration, mutations: mutations,
                                            problem: problem, savedAs: saved))
            }
        }
        print("fuzz \(target): \(seeds.count + iterations) inputs in \(clock.now - start), \(findings.count) problems")
        return findings
    }

    /// The input being tried, kept on disk for as long as it is being tried.
    private final class Breadcrumb {
        private let path: String
        private var descriptor: Int32 = -1

        init(target: String) {
            path = (FuzzArtifacts.directory as NSString).appendingPathComponent("\(target).in-progress")
            try? FileManager.default.createDirectory(atPath: FuzzArtifacts.directory, withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: path) {
                let kept = (FuzzArtifacts.directory as NSString).appendingPathComponent("\(target)-crashed-\(Int(Date().timeIntervalSince1970)).bin")
                if rename(path, kept) == 0 {
                    print("fuzz \(target): an earlier run died on the input now in \(kept)")
                }
            }
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        }

        /// Best effort: a breadcrumb that cannot be written only loses the crash file, not the
        /// run, which the printed seed replays anyway.
        func record(_ input: [UInt8]) {
            guard descriptor >= 0 else { return }
            guard ftruncate(descriptor, 0) == 0 else { return }
            _ = input.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }

        func remove() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
            unlink(path)
        }
    }
}

/// A bounded, seeded fuzz run of a program: each input is written to a file and the program
/// run on it in a child process, so a crash or a hang is caught and reported, with the input
/// saved, instead of ending the test run.
public struct ChildFuzzCampaign {
    public let target: String
    public let seed: UInt64
    public let iterations: Int
    public let fileExtension: String
    public var timeout: Duration = .seconds(20)
    private var mutator: Mutator

    public init(target: String, corpus: [[UInt8]], tokens: [[UInt8]] = [], iterations: Int,
                fileExtension: String, maximumSize: Int = 1 << 16) {
        self.target = target
        seed = FuzzSeed.seed(for: target)
        self.iterations = FuzzSeed.iterations(iterations)
        self.fileExtension = fileExtension
        mutator = Mutator(seed: seed, corpus: corpus, tokens: tokens, maximumSize: maximumSize)
    }

    /// Runs the program `arguments(inputPath)` names on every input. `judge` returns what is
    /// wrong with a run that neither crashed nor hung, or nil.
    public mutating func run(in directory: String, environment: [String: String],
                             arguments: (String) -> [String],
                             judge: (ChildProcess.Result) -> String?) throws -> [FuzzFinding] {
        let inputPath = (directory as NSString).appendingPathComponent("input.\(fileExtension)")
        var findings: [FuzzFinding] = []
        let start = ContinuousClock.now
        let seeds = mutator.corpus.map { (input: $0, mutations: [Mutator.Mutation]()) }
        for iteration in 0..<seeds.count + iterations {
            let (input, mutations) = iteration < seeds.count ? seeds[iteration] : mutator.next()
            try Data(input).write(to: URL(fileURLWithPath: inputPath))
            let result = try ChildProcess.run(arguments(inputPath), environment: environment, timeout: timeout)
            let problem: String?
            if result.timedOut {
                problem = "still running after \(timeout) (a hang)"
            } else if let signal = result.signal {
                problem = "killed by signal \(signal): \(result.standardError.suffix(2000))"
            } else {
                problem = judge(result).map { "\($0)\n\(result.transcript)" }
            }
            if let problem {
                let saved = findings.count < FuzzArtifacts.savedPerRun
                    ? FuzzArtifacts.save(input, as: "\(target)-\(seed)-\(iteration).\(fileExtension)") : nil
                findings.append(FuzzFinding(target: target, seed: seed, iteration: iteration, mutations: mutations,
                                            problem: problem, savedAs: saved))
            }
        }
        print("fuzz \(target): \(seeds.count + iterations) inputs in \(ContinuousClock.now - start), \(findings.count) problems")
        return findings
    }
}
