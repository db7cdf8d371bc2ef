// netns later
