import ArgumentParser
import Foundation
import VTCore
import VTEvents
import VTOutput

/// `--keep-size`, `--keep-free`, `--keep-age`: how much of what was recorded stays on disk.
struct RetentionOptions: ParsableArguments {
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Keep at most this many bytes of the files -o's template names in its folder (500M, 20G), deleting the oldest: the recording's segments, and those earlier runs left. With --events, the clips' template gets the same bound of its own unless --events-keep-size is given. Files the template cannot have made, and the file being written, are never deleted.", valueName: "bytes"))
    var keepSize: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Delete the files -o's template names (and the clips', unless --events-keep-age is given) once they are older than this (by modification time): 36h, 7d.", valueName: "time"), transform: DurationArgument.parse)
    var keepAge: DurationArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Keep this much of the disk free (20G, or 10% of the file system), deleting the oldest of the recording's files first, then the oldest clips; checked every 2 seconds and before a write would find the disk full, so a full disk does not end the recording.", valueName: "bytes|percent"))
    var keepFree: FreeSpaceArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --events: keep at most this many bytes of clips.", valueName: "bytes"))
    var eventsKeepSize: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --events: delete clips older than this.", valueName: "time"), transform: DurationArgument.parse)
    var eventsKeepAge: DurationArgument?

    var isEmpty: Bool { keepSize == nil && keepAge == nil && keepFree == nil && eventsKeepSize == nil && eventsKeepAge == nil }

    /// Not named validate(): swift-argument-parser would call that on its own.
    func validateRetention(recording: String?, events: String?, eventsAlone: Bool) throws {
        if events == nil, let given = [eventsKeepSize.map { _ in "--events-keep-size" },
                                       eventsKeepAge.map { _ in "--events-keep-age" }].compactMap({ $0 }).first {
            throw ValidationError("\(given) applies to event clips: add --events TEMPLATE")
        }
        guard !isEmpty else { return }
        let name = keepSize != nil ? "--keep-size" : keepAge != nil ? "--keep-age" : "--keep-free"
        if !eventsAlone && (keepSize != nil || keepAge != nil || keepFree != nil) {
            guard let recording, recording != "-" else {
                throw ValidationError(recording == "-" ? "\(name) deletes files, and -o is standard output"
                                                       : "\(name) needs -o: the files to keep are named by its template")
            }
            if NetworkDestination.looksLikeURL(recording) {
                throw ValidationError("\(name) deletes files, and -o \(recording) is a stream")
            }
            try Self.checkFolder(recording, option: name)
        }
        if let events { try Self.checkFolder(events, option: eventsKeepSize != nil ? "--events-keep-size" : name) }
    }

    /// Retention lists one folder: a template whose folder has fields cannot be swept.
    private static func checkFolder(_ template: String, option: String) throws {
        guard let parsed = try? OutputTemplate(template, labels: true), parsed.fixedDirectory == nil else { return }
        throw ValidationError("\(option): the folder of \(template) changes with time; retention looks in one folder: "
                              + "put the fields in the file name")
    }

    /// The rules for the recording's files and the clips'.
    func rules(recording: OutputTemplate?, clips: OutputTemplate?, device: String, preset: String?) -> [RetentionRule] {
        var rules: [RetentionRule] = []
        if let recording, keepSize != nil || keepAge != nil || keepFree != nil {
            rules.append(RetentionRule(name: "-o", template: recording, device: device, preset: preset,
                                       keepBytes: keepSize?.value, keepSeconds: keepAge?.seconds))
        }
        if let clips {
            rules.append(RetentionRule(name: "--events", template: clips, device: device, preset: preset,
                                       keepBytes: eventsKeepSize?.value ?? keepSize?.value,
                                       keepSeconds: eventsKeepAge?.seconds ?? keepAge?.seconds))
        }
        return rules
    }
}

/// `--keep-free 20G` or `--keep-free 10%`.
struct FreeSpaceArgument: ExpressibleByArgument {
    let target: FreeSpaceTarget

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        if text.hasSuffix("%") {
            guard let share = Double(text.dropLast()), share > 0, share < 100 else { return nil }
            target = .percent(share)
        } else {
            guard let bytes = parseDecimalQuantity(text), bytes > 0 else { return nil }
            target = .bytes(bytes)
        }
    }
}
