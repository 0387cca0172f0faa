import Foundation

/// nginx with libnginx-mod-rtmp as a test's RTMP server: one process of its own per receiver
/// generation (nginx never runs as the system's service here), its configuration, pid file,
/// log and recordings inside the test's directory.
enum NginxRTMP {
    static let program = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx"
    static let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so"

    /// `daemon off` and `master_process off` keep nginx one process, the test's child, so
    /// SIGSTOP, SIGKILL and the end of the test reach the process that holds the connection.
    /// `record all` writes audio and video as they arrive (a killed server leaves everything
    /// it received); `record_unique` adds the publish's start time to the file name, so a
    /// second publish gets a second file. That time is in whole seconds, so two publishes of
    /// one name in the same second share a name: the second truncates the first's file, which
    /// `overwrittenRecordings` then reports. Each generation records into a directory of its
    /// own, so a publish after a restart cannot meet one from before it.
    static func configuration(port: Int, recordings: String, pidFile: String) -> String {
        """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(pidFile);
        error_log stderr info;
        load_module \(module);
        events { worker_connections 64; }
        rtmp {
            server {
                listen 127.0.0.1:\(port);
                application live {
                    live on;
                    record all;
                    record_path \(recordings);
                    record_unique on;
                }
            }
        }

        """
    }

    /// The FLV files in `directory`, in the order the publishes began (the time record_unique
    /// put in each name, then the name).
    static func recordings(in directory: String) -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".flv") }
        func started(_ name: String) -> Int {
            Int(name.dropLast(".flv".count).split(separator: "-").last ?? "") ?? 0
        }
        return names.sorted { (started($0), $0) < (started($1), $1) }
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    /// A line for the parts' messages when nginx logged more publishes than there are files,
    /// empty otherwise. Each publish logs "publish: name='…'" at level info.
    static func overwrittenRecordings(log: String, recordings: Int) -> String {
        let publishes = log.components(separatedBy: "publish: name=").count - 1
        guard publishes > recordings else { return "" }
        return "nginx logged \(publishes) publishes but left \(recordings) recordings: a publish that began "
            + "in the same second as the one before it replaced that one's file (record_unique names by the second)\n"
    }
}
