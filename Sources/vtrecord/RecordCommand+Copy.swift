import ArgumentParser
import VTCore
import VTOutput

extension VTRecord {
    /// `--encoder copy` stores a camera's own Motion-JPEG or H.264 frames: it needs a camera,
    /// outputs that carry what it stores (Motion JPEG: Matroska and MP4 files; H.264: any), and
    /// nothing that needs the pictures, which it never decodes.
    func validateCopy() throws {
        guard encoder.encoder == .copy else {
            if input.checkFrames != .markers {
                throw ValidationError("--check-frames applies to --encoder copy: an encoder decodes every frame anyway")
            }
            if input.format == .h264 {
                throw ValidationError("--format h264 is stored as the camera sends it, never decoded: add --encoder copy")
            }
            return
        }
        if input.input != nil || input.testPattern {
            throw ValidationError("--encoder copy stores a camera's own MJPEG or H.264 frames, and "
                                  + "\(input.input != nil ? "--input" : "--test-pattern") sends pictures: use x264 or vaapi")
        }
        if let format = input.format.pixelFormat, format != .mjpeg && format != .h264 {
            throw ValidationError("--encoder copy stores a camera's own MJPEG or H.264 frames, not \(format.rawValue): "
                                  + "use --format mjpeg or h264, or another --encoder")
        }
        if input.format == .h264 && input.timing == .cfr {
            throw ValidationError("--timing cfr repeats frames into empty slots, which a camera's H.264 cannot take: "
                                  + "each access unit is stored once, at its time")
        }
        if input.format == .h264 && input.checkFrames == .decode {
            throw ValidationError("--check-frames decode applies to MJPEG; a camera's H.264 is checked by its NAL structure")
        }
        let needPictures = [events.motion ? "--motion" : nil, output.snapshot.map { _ in "--snapshot" },
                            http.http.map { _ in "--http" }]
            .compactMap { $0 }
        if let first = needPictures.first {
            throw ValidationError("\(first) needs the pictures, which --encoder copy does not decode: "
                                  + "record with x264 or vaapi")
        }
        // H.264 goes wherever an encoder's would.
        guard input.format != .h264 else { return }
        do throws(UsageError) {
            if let destination = try output.recordingDestination() {
                throw UsageError("-o \(destination): a stream carries H.264, and --encoder copy keeps MJPEG: "
                                 + "write it to a .mkv or .mp4 file")
            }
            var files: [(String, Container)] = []
            if let recording = output.recording { files.append((recording, try output.chosenContainer())) }
            for branch in try output.branches() {
                guard case .file(let path) = branch.target else {
                    throw UsageError("-o \(branch.name): a stream carries H.264, and --encoder copy keeps MJPEG: "
                                     + "write it to a .mkv or .mp4 file")
                }
                files.append((path, branch.fileContainer))
            }
            if let clips = events.events, let container = try events.container() { files.append((clips, container)) }
            for (path, container) in files where container != .mkv && container != .mp4 {
                throw UsageError("\(path): a .\(container.extensions[0]) file cannot carry MJPEG, which --encoder copy "
                                 + "keeps: write a .mkv or .mp4 file")
            }
        } catch {
            throw ValidationError(error.message)
        }
    }
}
