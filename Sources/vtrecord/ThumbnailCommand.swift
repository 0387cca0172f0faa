import ArgumentParser
import Foundation
import VTCore
import VTDecoding
import VTOutput
import VTPictures
import VTReading

/// `vtrecord thumbnail FILE`: JPEG pictures out of a recording.
struct Thumbnail: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Take JPEG pictures out of a recording: at chosen times, every so often, or spread over it; one file each, or a contact sheet.",
        discussion: """
            By default each picture is the keyframe at or before its time, which takes one \
            decoded frame; --exact gives the first picture at or after the time, as \
            'ffmpeg -ss T -frames:v 1' does. MP4, Matroska and MPEG-TS are seeked through their \
            index, so a picture from the middle of a long file does not read what comes before it.
            """
    )

    @Argument(help: ArgumentHelp("A raw .h264 (Annex B), MP4, Matroska or MPEG-TS file.", valueName: "file"))
    var file: String

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Times to take pictures at, comma-separated: '10s,1m30s,90'.", valueName: "times"), transform: TimeListArgument.parse)
    var at: TimeListArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("A picture every so long, from the start.", valueName: "time"), transform: DurationArgument.parse)
    var every: DurationArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("So many pictures spread evenly over the recording (default 1, or a sheet's cells with --tile).", valueName: "n"))
    var count: Int?

    @Flag(name: .long, help: "The picture at each time, decoded from the keyframe before it, instead of that keyframe.")
    var exact = false

    @Option(name: .long, help: ArgumentHelp("The pictures' size: '320x' (the height follows the aspect), 'x180', or '320x180' (default: the recording's).", valueName: "WxH"))
    var size: PictureSizeArgument?

    @Option(name: .long, help: ArgumentHelp("A contact sheet: the pictures COLUMNSxROWS to a JPEG, in time order.", valueName: "CxR"))
    var tile: TileArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("JPEG quality, 1 to 100.", valueName: "q"))
    var quality = 85

    @OptionGroup var decoding: DecoderOptions

    @Option(name: [.short, .long], help: ArgumentHelp("Where to write: a template with {n} (the picture's or sheet's number, from 1; {n:03} pads it) and {device} (the file's name without extension) (default '{device}-{n:03}.jpg'; '-' for standard output when there is one JPEG).", valueName: "path"))
    var output = "{device}-{n:03}.jpg"

    /// A bound on one run's pictures, so a mistyped --every cannot fill a disk.
    static let mostPictures = 10_000

    func validate() throws {
        guard [at != nil, every != nil, count != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("--at, --every and --count each choose the times: give one of them")
        }
        if let count, !(1...Self.mostPictures).contains(count) {
            throw ValidationError("--count must be between 1 and \(Self.mostPictures), not \(count)")
        }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be between 1 and 100, not \(quality)") }
    }

    func run() throws {
        let template: OutputTemplate
        do { template = try OutputTemplate(output) } catch { throw UsageError("-o \(output): \(error.description)") }
        let generator = try AssetImageGenerator(path: file, decoders: decoding.chooser())
        let times = try chosenTimes(generator)
        guard times.count <= Self.mostPictures else {
            throw UsageError("that asks for \(times.count) pictures, more than \(Self.mostPictures): choose a longer --every or a smaller --count")
        }
        let perFile = tile.map { $0.columns * $0.rows } ?? 1
        let files = (times.count + perFile - 1) / perFile
        if files > 1 && !template.numbersSegments {
            throw UsageError("\(times.count) pictures make \(files) files: give -o a template with {n}, such as 'thumb-{n:03}.jpg'")
        }
        if files > 1 && template.isStandardOutput {
            throw UsageError("\(files) JPEG files cannot all go to standard output: give -o a template with {n}")
        }
        var pictures: [PixelBuffer] = []
        var number = 0
        let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        for (index, time) in times.enumerated() {
            let image = try generator.image(at: time, exact: exact)
            pictures.append(try shaped(image))
            guard pictures.count == perFile || index == times.count - 1 else { continue }
            number += 1
            let picture: PixelBuffer
            if let tile {
                picture = Pictures.tiled(pictures, columns: tile.columns, rows: tile.rows)
            } else {
                picture = pictures[0]
            }
            pictures.removeAll()
            let bytes = try Pictures.jpeg(picture, quality: quality)
            let path = template.expand(.init(date: Date(), device: name, segment: number))
            try writeWholeFile(path: path, bytes: bytes)
        }
        var said = Set<String>()
        DecoderOptions.noteFallback(generator.decoders, file: file, said: &said)
    }

    /// The times asked for, in seconds, checked against the recording's length.
    private func chosenTimes(_ generator: AssetImageGenerator) throws -> [Double] {
        if let at {
            // A time past the end has no picture (ffmpeg's -ss there writes nothing); the last
            // picture handed out in its place would pass for the one asked for.
            if let length = try generator.length(), let late = at.seconds.first(where: { $0 >= length }) {
                throw UsageError("--at: \(Self.seconds(late)) is past the end of \(file), which is \(Self.seconds(length)) long: "
                                 + "give times below \(Self.seconds(length))")
            }
            return at.seconds
        }
        guard let length = try generator.length(), length > 0 else {
            throw ReadError(path: file, reason: "does not say how long it is: name the times with --at")
        }
        if let every {
            return stride(from: 0, to: length, by: every.seconds).map { $0 }
        }
        let count = self.count ?? tile.map { $0.columns * $0.rows } ?? 1
        return (0..<count).map { (Double($0) + 0.5) * length / Double(count) }
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    /// A picture at the asked size, in full-range levels for JPEG.
    private func shaped(_ image: AssetImageGenerator.Image) throws -> PixelBuffer {
        let source = image.picture
        var width = source.width
        var height = source.height
        if let size {
            switch (size.width, size.height) {
            case let (w?, h?): (width, height) = (w, h)
            case let (w?, nil): (width, height) = (w, Int((Double(w) * Double(source.height) / Double(source.width)).rounded()))
            case let (nil, h?): (width, height) = (Int((Double(h) * Double(source.width) / Double(source.height)).rounded()), h)
            case (nil, nil): break
            }
        }
        // 4:2:0 and the sheet's cells take even sizes.
        width = max(2, width + width % 2)
        height = max(2, height + height % 2)
        let picture = Pictures.scaled(source, width: width, height: height)
        if !image.isFullRange { Pictures.expandToFullRange(picture) }
        return picture
    }
}

/// `--at 10s,1m,90`: times in seconds from the start, 0 and up (read as `DurationArgument` is,
/// so that `-1s` is not taken for an option).
struct TimeListArgument: ExpressibleByArgument {
    let seconds: [Double]
    init?(argument: String) {
        guard let value = try? Self.parse(argument) else { return nil }
        self = value
    }

    private init(seconds: [Double]) { self.seconds = seconds }

    static func parse(_ argument: String) throws(TimeListError) -> TimeListArgument {
        var seconds: [Double] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: false) {
            do {
                seconds.append(try TimeValueError.seconds(String(part)))
            } catch {
                throw TimeListError(part: String(part), isNegative: error == .negative)
            }
        }
        return TimeListArgument(seconds: seconds)
    }
}

/// Which of `--at`'s times is not one, and why.
struct TimeListError: Error, CustomStringConvertible {
    let part: String
    let isNegative: Bool

    var description: String {
        isNegative
            ? "'\(part)' is negative: times count from the start of the recording, from 0 up, such as 0,10s,1m30s"
            : "'\(part)' is not a time: give times from the start, comma-separated, such as 0,10s,1m30s,90"
    }
}

/// `--size 320x`, `x180`, `320x180`.
struct PictureSizeArgument: ExpressibleByArgument {
    let width: Int?
    let height: Int?
    init?(argument: String) {
        let parts = argument.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let width = parts[0].isEmpty ? nil : Int(parts[0])
        let height = parts[1].isEmpty ? nil : Int(parts[1])
        guard (parts[0].isEmpty || width != nil) && (parts[1].isEmpty || height != nil), width != nil || height != nil,
              (width ?? 2) >= 2 && (width ?? 2) <= 16384, (height ?? 2) >= 2 && (height ?? 2) <= 16384 else { return nil }
        self.width = width
        self.height = height
    }
}

/// `--tile 4x3`.
struct TileArgument: ExpressibleByArgument {
    let columns: Int
    let rows: Int
    init?(argument: String) {
        let parts = argument.lowercased().split(separator: "x")
        guard parts.count == 2, let columns = Int(parts[0]), let rows = Int(parts[1]),
              (1...64).contains(columns), (1...64).contains(rows) else { return nil }
        self.columns = columns
        self.rows = rows
    }
}
