import Foundation
import TOMLKit
import VTCore

/// A list of recordings to run one after another, read from TOML:
///
///     [defaults]              # optional: every job starts from these
///     preset = "720p30"
///     duration = "10s"
///
///     [[job]]
///     name = "front"
///     device = "/dev/video0"
///     output = "front-%Y%m%d-%H%M%S.h264"
///
/// A job's keys are the recording options' long names (as in a preset), plus `name` and
/// `preset` (a name or path, or an array of them). A job's own keys replace the defaults'.
struct BatchFile {
    struct Job {
        let number: Int
        let name: String
        /// The job as a vtrecord command line.
        var arguments: [String]
        /// Where its `json-summary` goes when the job names one.
        let summaryPath: String?
    }

    let path: String
    let jobs: [Job]

    static let topLevelKeys = ["description", "defaults", "job"]
    static let jobKeys: Set<String> = ["name", "preset"]

    /// Reads the file and checks every job as far as can be done without running it: keys,
    /// values, presets and option combinations. A problem names the file, line and key.
    init(path: String, catalog: RecordingOptionCatalog = .shared) throws {
        self.path = path
        let origin = PresetOrigin.file(path)
        let text = try PresetLibrary.read(path, as: "batch file \(path)")
        let table = try Preset.parseTOML(text, origin: origin)
        let lines = KeyLines(text: text)
        for key in table.keys where !Self.topLevelKeys.contains(key) {
            var problem = "unknown key: a batch file has [defaults] and [[job]] tables"
            if catalog.option(key) != nil || Self.jobKeys.contains(key) {
                problem = "belongs in [defaults] or in a [[job]]"
            } else if let nearest = NearestNames.suggestion(for: key, in: Self.topLevelKeys) {
                problem += "; did you mean '\(nearest)'?"
            }
            throw PresetError(origin: origin, line: lines.line(of: key), key: key, problem: problem)
        }
        var defaults: Preset?
        var defaultPresets: [String]?
        if let value = table["defaults"] {
            guard let section = value.table else {
                throw PresetError(origin: origin, line: lines.line(of: "defaults"), key: "defaults",
                                  problem: "must be a table: [defaults]")
            }
            defaults = try Preset(name: "defaults", origin: origin, table: section,
                                  line: { lines.line(of: $0, in: "defaults") }, reserved: ["preset"])
            defaultPresets = try Self.presets(in: section, origin: origin, line: lines.line(of: "preset", in: "defaults"))
        }
        guard let list = table["job"]?.array, !list.isEmpty else {
            throw PresetError(origin: origin, line: nil, key: nil,
                              problem: "no jobs: add a [[job]] table for each recording")
        }
        var jobs: [Job] = []
        for (index, item) in list.enumerated() {
            let section = "job#\(index + 1)"
            guard let jobTable = item.table else {
                throw PresetError(origin: origin, line: lines.line(of: "job"), key: "job",
                                  problem: "must be an array of tables: [[job]]")
            }
            let number = index + 1
            var name = "job \(number)"
            if let value = jobTable["name"] {
                guard value.type == .string, let text = value.string else {
                    throw PresetError(origin: origin, line: lines.line(of: "name", in: section), key: "name",
                                      problem: "takes a string, not \(Preset.typeName(value.type))")
                }
                name = text
            }
            let job = try Preset(name: name, origin: origin, table: jobTable,
                                 line: { lines.line(of: $0, in: section) }, reserved: Self.jobKeys)
            let here = "\(path):\(lines.header(section)): job \(number) (\(name))"
            let ownPresets = try Self.presets(in: jobTable, origin: origin, line: lines.line(of: "preset", in: section))
            let presets = ownPresets ?? defaultPresets ?? []
            // Layers: the defaults, then the job's presets, then the job's own keys. A job's
            // presets come first on its command line, so the defaults they set are left out.
            var defaultEntries = defaults?.entries ?? []
            if ownPresets != nil {
                let loaded: [Preset]
                do {
                    loaded = try presets.map { try PresetLibrary.standard().load($0) }
                } catch let error as any ReportableError {
                    throw UsageError("\(here): \(error.description)")
                }
                defaultEntries = PresetResolution.merge([defaultEntries] + loaded.map(\.entries), catalog: catalog)
                    .filter { entry in defaultEntries.contains(entry) }
            }
            // Defaults serve every kind of job as a preset does: a file job leaves out their
            // camera settings.
            defaultEntries = PresetResolution.fitted(defaultEntries, typed: job.entries)
            let entries = PresetResolution.merge([defaultEntries, job.entries], catalog: catalog)
            let arguments = presets.flatMap { ["--preset", $0] } + entries.flatMap { $0.arguments(catalog: catalog) }
            try Self.check(arguments, entries: entries, file: path, at: here,
                           keyLine: { key in job.entries.contains { $0.key == key } ? lines.line(of: key, in: section) : nil })
            let summary = entries.first { $0.key == "json-summary" }.flatMap { $0.value.items.first }
            jobs.append(Job(number: number, name: name, arguments: arguments, summaryPath: summary))
        }
        self.jobs = jobs
    }

    /// `preset = "a"` or `preset = ["a", "b"]`.
    private static func presets(in table: TOMLTable, origin: PresetOrigin, line: Int) throws(PresetError) -> [String]? {
        guard let value = table["preset"] else { return nil }
        if value.type == .string, let name = value.string { return [name] }
        if let array = value.array {
            let names = array.compactMap { $0.type == .string ? $0.string : nil }
            if names.count == array.count { return names }
        }
        throw PresetError(origin: origin, line: line, key: "preset",
                          problem: "takes a preset name or path, or an array of them, not \(Preset.typeName(value.type))")
    }

    /// What would stop the job at once, found before any job runs: a preset that cannot be
    /// read, options that do not go together, and standard output, which the batch keeps.
    /// A problem with one of the job's own keys names its line.
    private static func check(_ arguments: [String], entries: [Preset.Entry], file: String, at location: String,
                              keyLine: (String) -> Int?) throws {
        let resolution: PresetResolution
        do {
            resolution = try PresetResolution.resolve(arguments)
        } catch let error as any ReportableError {
            throw UsageError("\(location): \(error.description)")
        }
        let settings = resolution.entries + CommandLineEntries.entries(in: arguments, catalog: .shared)
        for key in ["output", "json-summary"] where settings.contains(where: { $0.key == key && $0.value.items == ["-"] }) {
            throw UsageError("\(location): \(key) = \"-\" cannot be used in a batch: give a file")
        }
        do {
            _ = try Record.parseAsRoot(resolution.arguments)
        } catch {
            let message = Record.message(for: error)
            if let located = resolution.locating(message, commandLine: arguments) {
                throw UsageError("\(location): \(located.description)")
            }
            if let option = message.firstMatch(of: /--([a-z][a-z0-9-]*)/).map({ String($0.output.1) }),
               let line = keyLine(option) {
                throw UsageError("\(file):\(line): \(option): \(message)")
            }
            throw UsageError("\(location): \(message)")
        }
    }
}
