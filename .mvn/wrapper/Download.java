import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

/** Fetches one URL into a file; used by ./mvnw when neither curl nor wget is installed. */
public class Download {
    public static void main(String[] args) throws Exception {
        HttpClient client = HttpClient.newBuilder()
                .followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(Duration.ofSeconds(30))
                .build();
        HttpResponse<Path> response = client.send(
                HttpRequest.newBuilder(URI.create(args[0])).timeout(Duration.ofMinutes(5)).build(),
                HttpResponse.BodyHandlers.ofFile(Path.of(args[1])));
        if (response.statusCode() != 200) {
            System.err.println("download of " + args[0] + " failed: HTTP " + response.statusCode());
            System.exit(1);
        }
    }
}
