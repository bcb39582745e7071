import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One blocking HTTP POST of JSON, for the chatbot's `rest` adapter (low volume).
enum HTTPPost {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func send(url: URL, body: [UInt8], timeout: Double) -> Result<(Int, Data), Failure> {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body)
        final class Outcome: @unchecked Sendable { var value: Result<(Int, Data), Failure> = .failure(Failure(description: "no answer")) }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                outcome.value = .failure(Failure(description: error.localizedDescription))
            } else {
                outcome.value = .success(((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            return .failure(Failure(description: "timed out after \(timeout) s"))
        }
        return outcome.value
    }
}
