package com.example.echo;

import jakarta.enterprise.inject.se.SeContainer;
import jakarta.enterprise.inject.se.SeContainerInitializer;

/** Starts Weld SE, which finds Echo (META-INF/beans.xml) and jdapl's extension, sends one message, stops. */
public final class Main {
    public static void main(String[] args) {
        String text = args.length > 0 ? String.join(" ", args) : "hello over emu0";
        try (SeContainer container = SeContainerInitializer.newInstance().initialize()) {
            Echo echo = container.select(Echo.class).get();
            System.out.println("sent:     " + text);
            System.out.println("received: " + echo.roundTrip(text));
        }   // the container's end closes the IAs
    }
}
